# selftest-replaces: softmax_rows
# selftest-must-fail: test_softmax_rows
# selftest-selfcheck-fails: test_softmax_rows
# Mistake: reads only the first block_c columns of each row. / 错误：每行只读前 block_c 列。
@@ -7,5 +7,5 @@
     m = tl.full((1,), float("-inf"), tl.float32)  # running maximum
     total = tl.zeros((1,), dtype=tl.float32)  # running sum of exp(x - m)
-    for c0 in range(0, n_cols, BLOCK_C):  # pass 1: maximum and sum together (online softmax)
+    for c0 in range(0, BLOCK_C, BLOCK_C):
         cols = c0 + tl.arange(0, BLOCK_C)
         x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
@@ -13,5 +13,5 @@
         total = total * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
         m = m_new
-    for c0 in range(0, n_cols, BLOCK_C):  # pass 2: normalise and store
+    for c0 in range(0, BLOCK_C, BLOCK_C):
         cols = c0 + tl.arange(0, BLOCK_C)
         x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
