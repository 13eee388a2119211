# selftest-replaces: ws_forward
# selftest-must-fail: test_ws_forward
# selftest-selfcheck-fails: test_ws_forward
# Mistake: launches n_rows // BLOCK_ROWS programs, dropping the tail rows. / 错误：程序数用整除，丢掉了尾部的行。
@@ -25 +25 @@
-    grid = (triton.cdiv(x2.shape[0], BLOCK_ROWS),)
+    grid = (max(1, x2.shape[0] // BLOCK_ROWS),)
