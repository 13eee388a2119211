# selftest-replaces: fa_backward_dq
# Variant: P from exp2, with log2 e folded into the scale and into L. / 变体：用 exp2 计算 P，log2 e 乘进缩放与 L。
@@ -33 +33 @@
-        s = tl.dot(q, tl.trans(k)) * scale
+        s = tl.dot(q, tl.trans(k)) * (scale * 1.4426950408889634)  # S · log2 e
@@ -37 +37 @@
-        p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
+        p = tl.where(visible, tl.exp2(s - lse[:, None] * 1.4426950408889634), 0.0)
