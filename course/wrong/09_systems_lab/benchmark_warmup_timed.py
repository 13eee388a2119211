# selftest-replaces: sl_benchmark
# selftest-must-fail: test_benchmark
# selftest-selfcheck-fails: test_benchmark
# Mistake: times the warm-up calls too (reps counts them). / 错误：预热的调用也被计时（reps 包含它们）。
@@ -2,2 +1,0 @@
-    for _ in range(warmup):
-        fn()
@@ -5 +3 @@
-    for _ in range(reps):
+    for _ in range(warmup + reps):
