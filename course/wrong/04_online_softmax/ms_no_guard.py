# selftest-replaces: os_merge_states
# selftest-must-fail: test_merge_states
# Mistake: subtracts m itself: merging two empty states gives e^(-inf + inf) = NaN.
# 错误：直接减去 m：两个空状态合并得到 e^(-inf + inf) = NaN。
@@ -4 +4 @@
-    shift = finite_max(m)
+    shift = m
