# selftest-replaces: fa_forward_kernel
# Variant: online softmax in base 2: log2 e folded into the score scale, tl.exp2, and L converted back to the
# natural log (L = (m₂ + log₂ ℓ) · ln 2). / 变体：以 2 为底的在线 softmax：log2 e 乘进分数缩放，用 tl.exp2，
# L 换回自然对数（L = (m₂ + log₂ ℓ) · ln 2）。
@@ -22 +22,2 @@
     acc = tl.zeros((BLOCK_Q, HEAD_DIM), dtype=tl.float32)
+    qk_scale = scale * 1.4426950408889634  # log2(e): exp(x) = exp2(x · log2 e)
@@ -33 +34 @@
-        s = tl.dot(q, tl.trans(k)) * scale
+        s = tl.dot(q, tl.trans(k)) * qk_scale
@@ -39,2 +40,2 @@
-        alpha = tl.exp(m - m_new)
-        p = tl.exp(s - m_new[:, None])
+        alpha = tl.exp2(m - m_new)
+        p = tl.exp2(s - m_new[:, None])
@@ -48 +49 @@
-    tl.store(lse_ptr + batch * stride_lb + rows * stride_ln, m + tl.log(total), mask=row_ok)
+    tl.store(lse_ptr + batch * stride_lb + rows * stride_ln, (m + tl.log2(total)) * 0.6931471805599453, mask=row_ok)
