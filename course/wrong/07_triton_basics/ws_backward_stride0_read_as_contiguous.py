# selftest-replaces: ws_backward
# selftest-must-fail: test_ws_backward
# selftest-selfcheck-fails: test_ws_backward
# Mistake: flattens grad_y with reshape and reads it with stride 1, ignoring stride_gy: a stride-0 grad_y (y.sum()) is read past its end. / 错误：用 reshape 展平 grad_y 后按步长 1 读取，忽略 stride_gy：步长为 0 的 grad_y（y.sum()）会读到内存之外。
@@ -6,5 +6,5 @@
     rows = pid * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
     row_ok = rows < n_rows
-    g = tl.load(grad_y_ptr + rows * stride_gy, mask=row_ok, other=0.0).to(tl.float32)
+    g = tl.load(grad_y_ptr + rows, mask=row_ok, other=0.0).to(tl.float32)
     for c0 in range(0, n_cols, BLOCK_C):
         cols = c0 + tl.arange(0, BLOCK_C)
