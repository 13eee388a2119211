# selftest-replaces: fa_forward_kernel
# selftest-must-fail: test_forward, test_dq
# Mistake: runs the online softmax in base 2 (exp2 with log2 e folded into the scale) and stores L in base 2:
# O is right, but L = m₂ + log₂ ℓ is not the natural-log L the backward needs (missing the factor ln 2).
# 错误：以 2 为底做在线 softmax（把 log2 e 乘进缩放），L 也按以 2 为底存储：O 正确，
# 但 L = m₂ + log₂ ℓ 不是反向传播需要的自然对数 L（少乘了 ln 2）。
@@ -22 +22,2 @@
     acc = tl.zeros((BLOCK_Q, HEAD_DIM), dtype=tl.float32)
+    qk_scale = scale * 1.4426950408889634  # log2(e)
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
+    tl.store(lse_ptr + batch * stride_lb + rows * stride_ln, m + tl.log2(total), mask=row_ok)
