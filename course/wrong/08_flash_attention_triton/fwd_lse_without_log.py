# selftest-replaces: fa_forward_kernel
# selftest-must-fail: test_forward, test_dq
# Mistake: stores L = m + ℓ instead of m + log ℓ (O is right; the saved L and the backward are not).
# 错误：L 存成 m + ℓ 而不是 m + log ℓ（O 正确，保存的 L 与反向传播错误）。
@@ -48 +48 @@
-    tl.store(lse_ptr + batch * stride_lb + rows * stride_ln, m + tl.log(total), mask=row_ok)
+    tl.store(lse_ptr + batch * stride_lb + rows * stride_ln, m + total, mask=row_ok)
