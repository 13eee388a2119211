# selftest-replaces: softmax_rows
# selftest-must-fail: test_softmax_rows
# selftest-selfcheck-fails: test_softmax_rows
# Mistake: reads only the first block_c columns of each row. / 错误：每行只读前 block_c 列。
@@ -9 +9 @@
-    for c0 in range(0, n_cols, BLOCK_C):  # pass 1: maximum and sum together (online softmax)
+    for c0 in range(0, BLOCK_C, BLOCK_C):
@@ -15 +15 @@
-    for c0 in range(0, n_cols, BLOCK_C):  # pass 2: normalise and store
+    for c0 in range(0, BLOCK_C, BLOCK_C):
