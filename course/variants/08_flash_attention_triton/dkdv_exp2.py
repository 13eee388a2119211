# selftest-replaces: fa_backward_dkdv
# Variant: Pᵀ from exp2, with log2 e folded into the scale and into L. / 变体：用 exp2 计算 Pᵀ，log2 e 乘进缩放与 L。
@@ -34 +34 @@
-        st = tl.dot(k, tl.trans(q)) * scale  # Sᵀ, (BLOCK_K, BLOCK_Q): no tl.trans of a tl.dot result
+        st = tl.dot(k, tl.trans(q)) * (scale * 1.4426950408889634)  # Sᵀ · log2 e, (BLOCK_K, BLOCK_Q)
@@ -38 +38 @@
-        pt = tl.where(visible, tl.exp(st - lse[None, :]), 0.0)
+        pt = tl.where(visible, tl.exp2(st - lse[None, :] * 1.4426950408889634), 0.0)
