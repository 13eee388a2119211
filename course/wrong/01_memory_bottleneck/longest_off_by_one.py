# selftest-replaces: max_sequence
# selftest-must-fail: test_max_sequence_length
# Mistake: returns the first N that no longer fits instead of the last one that does.
# 错误：返回第一个放不下的 N，而不是最后一个放得下的 N。
@@ -17 +17 @@
-    return low
+    return high
