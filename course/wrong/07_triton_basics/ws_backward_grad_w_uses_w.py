# selftest-replaces: ws_backward
# selftest-must-fail: test_ws_backward
# selftest-selfcheck-fails: test_ws_backward
# Mistake: grad_w sums grad_y·w instead of grad_y·x. / 错误：grad_w 用了 w 而不是 x。
@@ -19 +19 @@
-        tl.store(partial_ptr + pid * n_cols + cols, tl.sum(g[:, None] * x, axis=0), mask=col_ok)
+        tl.store(partial_ptr + pid * n_cols + cols, tl.sum(g[:, None] * w[None, :], axis=0), mask=col_ok)
