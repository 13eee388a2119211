# selftest-replaces: fa_backward_dkdv
# Variant: Pᵀ from exp2, with log2 e folded into the scale and into L. / 变体：用 exp2 计算 Pᵀ，log2 e 乘进缩放与 L。
@@ -32,9 +32,9 @@
         lse = tl.load(lse_ptr + batch * stride_lb + rows * stride_ln, mask=row_ok, other=0.0)
         delta = tl.load(delta_ptr + batch * stride_deltab + rows * stride_deltan, mask=row_ok, other=0.0)
-        st = tl.dot(k, tl.trans(q)) * scale  # Sᵀ, (BLOCK_K, BLOCK_Q): no tl.trans of a tl.dot result
+        st = tl.dot(k, tl.trans(q)) * (scale * 1.4426950408889634)  # Sᵀ · log2 e, (BLOCK_K, BLOCK_Q)
         visible = col_ok[:, None] & row_ok[None, :]
         if IS_CAUSAL:
             visible = visible & (cols[:, None] <= rows[None, :])
-        pt = tl.where(visible, tl.exp(st - lse[None, :]), 0.0)
+        pt = tl.where(visible, tl.exp2(st - lse[None, :] * 1.4426950408889634), 0.0)
         dv += tl.dot(pt.to(do.dtype), do)
         dpt = tl.dot(v, tl.trans(do))
