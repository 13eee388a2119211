# selftest-replaces: ws_forward
# selftest-must-fail: test_ws_forward
# selftest-selfcheck-fails: test_ws_forward
# Mistake: sums only the first BLOCK_C columns (no loop over the columns). / 错误：只累加前 BLOCK_C 列，没有沿列循环。
@@ -9,6 +9,6 @@
     row_ok = rows < n_rows
     acc = tl.zeros((BLOCK_ROWS,), dtype=tl.float32)
-    for c0 in range(0, n_cols, BLOCK_C):
-        cols = c0 + tl.arange(0, BLOCK_C)
+    if True:
+        cols = tl.arange(0, BLOCK_C)
         col_ok = cols < n_cols
         x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :] * stride_col,
