# selftest-replaces: ws_forward
# selftest-must-fail: test_ws_forward
# selftest-selfcheck-fails: test_ws_forward
# Mistake: ignores the strides and indexes x as if it were contiguous (row * n_cols + col). / 错误：忽略步长，按连续张量计算地址（行 × 列数 + 列）。
@@ -14 +14 @@
-        x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :] * stride_col,
+        x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :],
