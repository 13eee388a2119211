# selftest-notebook: triton_basics.ipynb
# selftest-replaces: softmax_rows
# selftest-must-fail: test_softmax_rows
# selftest-selfcheck-fails: test_softmax_rows
# Mistake: online softmax without rescaling the running sum when the maximum grows. / 错误：最大值变大时没有重新缩放运行和。
@@ -7,11 +7,11 @@
     m = tl.full((1,), float("-inf"), tl.float32)  # running maximum
     total = tl.zeros((1,), dtype=tl.float32)  # running sum of exp(x - m)
-    for c0 in range(0, n_cols, BLOCK_C):  # pass 1: maximum and sum together (online softmax)
+    for c0 in range(0, n_cols, BLOCK_C):
         cols = c0 + tl.arange(0, BLOCK_C)
         x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
         m_new = tl.maximum(m, tl.max(x, axis=0))
-        total = total * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
+        total = total + tl.sum(tl.exp(x - m_new), axis=0)
         m = m_new
-    for c0 in range(0, n_cols, BLOCK_C):  # pass 2: normalise and store
+    for c0 in range(0, n_cols, BLOCK_C):
         cols = c0 + tl.arange(0, BLOCK_C)
         x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
