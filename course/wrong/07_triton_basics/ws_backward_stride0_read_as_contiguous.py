# selftest-replaces: ws_backward
# selftest-must-fail: test_ws_backward
# selftest-selfcheck-fails: test_ws_backward
# Mistake: flattens grad_y with reshape and reads it with stride 1, ignoring stride_gy: a stride-0 grad_y (y.sum()) is read past its end. / 错误：用 reshape 展平 grad_y 后按步长 1 读取，忽略 stride_gy：步长为 0 的 grad_y（y.sum()）会读到内存之外。
@@ -8 +8 @@
-    g = tl.load(grad_y_ptr + rows * stride_gy, mask=row_ok, other=0.0).to(tl.float32)
+    g = tl.load(grad_y_ptr + rows, mask=row_ok, other=0.0).to(tl.float32)
