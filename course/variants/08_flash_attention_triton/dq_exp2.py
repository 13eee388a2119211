# selftest-replaces: fa_backward_dq
# Variant: P from exp2, with log2 e folded into the scale and into L. / 变体：用 exp2 计算 P，log2 e 乘进缩放与 L。
@@ -31,9 +31,9 @@
         v = tl.load(v_ptr + batch * stride_vb + cols[:, None] * stride_vn + dims[None, :] * stride_vd,
                     mask=col_ok[:, None], other=0.0)
-        s = tl.dot(q, tl.trans(k)) * scale
+        s = tl.dot(q, tl.trans(k)) * (scale * 1.4426950408889634)  # S · log2 e
         visible = row_ok[:, None] & col_ok[None, :]
         if IS_CAUSAL:
             visible = visible & (cols[None, :] <= rows[:, None])
-        p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
+        p = tl.where(visible, tl.exp2(s - lse[:, None] * 1.4426950408889634), 0.0)
         dp = tl.dot(do, tl.trans(v))
         ds = p * (dp - delta[:, None])
