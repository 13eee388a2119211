# selftest-replaces: ws_backward
# selftest-must-fail: test_ws_backward
# selftest-selfcheck-fails: test_ws_backward
# Mistake: every program writes its partial sum to row 0 of partial (pid forgotten). / 错误：每个程序都把部分和写到 partial 的第 0 行（忘了 pid）。
@@ -19 +19 @@
-        tl.store(partial_ptr + pid * n_cols + cols, tl.sum(g[:, None] * x, axis=0), mask=col_ok)
+        tl.store(partial_ptr + cols, tl.sum(g[:, None] * x, axis=0), mask=col_ok)
