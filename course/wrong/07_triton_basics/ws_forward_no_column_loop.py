# selftest-replaces: ws_forward
# selftest-must-fail: test_ws_forward
# selftest-selfcheck-fails: test_ws_forward
# Mistake: sums only the first BLOCK_C columns (no loop over the columns). / 错误：只累加前 BLOCK_C 列，没有沿列循环。
@@ -11,2 +11,2 @@
-    for c0 in range(0, n_cols, BLOCK_C):
-        cols = c0 + tl.arange(0, BLOCK_C)
+    if True:
+        cols = tl.arange(0, BLOCK_C)
