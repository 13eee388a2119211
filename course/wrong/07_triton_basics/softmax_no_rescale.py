# selftest-replaces: softmax_rows
# selftest-must-fail: test_softmax_rows
# selftest-selfcheck-fails: test_softmax_rows
# Mistake: online softmax without rescaling the running sum when the maximum grows. / 错误：最大值变大时没有重新缩放运行和。
@@ -11,5 +11,5 @@
         x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
         m_new = tl.maximum(m, tl.max(x, axis=0))
-        total = total * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
+        total = total + tl.sum(tl.exp(x - m_new), axis=0)
         m = m_new
     for c0 in range(0, n_cols, BLOCK_C):  # pass 2: normalise and store
