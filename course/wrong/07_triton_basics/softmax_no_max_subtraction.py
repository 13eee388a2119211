# selftest-replaces: softmax_rows
# selftest-must-fail: test_softmax_rows
# selftest-selfcheck-fails: test_softmax_rows
# Mistake: exponentiates the raw scores (no max subtraction): exp overflows. / 错误：未减去最大值，exp 溢出。
@@ -11,10 +11,10 @@
         x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
         m_new = tl.maximum(m, tl.max(x, axis=0))
-        total = total * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
+        total = total + tl.sum(tl.exp(x), axis=0)
         m = m_new
     for c0 in range(0, n_cols, BLOCK_C):  # pass 2: normalise and store
         cols = c0 + tl.arange(0, BLOCK_C)
         x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
-        y = tl.exp(x - m) / total
+        y = tl.exp(x) / total
         tl.store(y_row + cols * stride_y_col, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)

