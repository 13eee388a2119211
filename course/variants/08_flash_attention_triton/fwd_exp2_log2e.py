# selftest-replaces: fa_forward_kernel
# Variant: online softmax in base 2: log2 e folded into the score scale, tl.exp2, and L converted back to the
# natural log (L = (m₂ + log₂ ℓ) · ln 2). / 变体：以 2 为底的在线 softmax：log2 e 乘进分数缩放，用 tl.exp2，
# L 换回自然对数（L = (m₂ + log₂ ℓ) · ln 2）。
@@ -21,4 +21,5 @@
     total = tl.zeros((BLOCK_Q,), dtype=tl.float32)
     acc = tl.zeros((BLOCK_Q, HEAD_DIM), dtype=tl.float32)
+    qk_scale = scale * 1.4426950408889634  # log2(e): exp(x) = exp2(x · log2 e)
     k_end = n_k
     if IS_CAUSAL:  # keys after this tile's last query are all masked: skip them
@@ -31,5 +32,5 @@
         v = tl.load(v_ptr + batch * stride_vb + cols[:, None] * stride_vn + dims[None, :] * stride_vd,
                     mask=col_ok[:, None], other=0.0)
-        s = tl.dot(q, tl.trans(k)) * scale
+        s = tl.dot(q, tl.trans(k)) * qk_scale
         visible = col_ok[None, :]
         if IS_CAUSAL:
@@ -37,6 +38,6 @@
         s = tl.where(visible, s, float("-inf"))
         m_new = tl.maximum(m, tl.max(s, axis=1))
-        alpha = tl.exp(m - m_new)
-        p = tl.exp(s - m_new[:, None])
+        alpha = tl.exp2(m - m_new)
+        p = tl.exp2(s - m_new[:, None])
         total = total * alpha + tl.sum(p, axis=1)
         acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
@@ -46,3 +47,3 @@
     tl.store(o_ptr + batch * stride_ob + rows[:, None] * stride_on + dims[None, :] * stride_od,
              o.to(o_ptr.dtype.element_ty), mask=row_ok[:, None])
-    tl.store(lse_ptr + batch * stride_lb + rows * stride_ln, m + tl.log(total), mask=row_ok)
+    tl.store(lse_ptr + batch * stride_lb + rows * stride_ln, (m + tl.log2(total)) * 0.6931471805599453, mask=row_ok)
