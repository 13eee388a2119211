# selftest-replaces: ws_backward
# selftest-must-fail: test_ws_backward
# selftest-selfcheck-fails: test_ws_backward
# Mistake: handles only the first BLOCK_C columns. / 错误：只处理前 BLOCK_C 列。
@@ -9,2 +9,2 @@
-    for c0 in range(0, n_cols, BLOCK_C):
-        cols = c0 + tl.arange(0, BLOCK_C)
+    if True:
+        cols = tl.arange(0, BLOCK_C)
