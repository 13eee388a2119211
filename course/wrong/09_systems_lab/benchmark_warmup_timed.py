# selftest-replaces: sl_benchmark
# selftest-must-fail: test_benchmark
# selftest-selfcheck-fails: test_benchmark
# Mistake: times the warm-up calls too (reps counts them). / 错误：预热的调用也被计时（reps 包含它们）。
@@ -1,7 +1,5 @@
 def benchmark(fn, warmup, reps):
-    for _ in range(warmup):
-        fn()
     samples = []
-    for _ in range(reps):
+    for _ in range(warmup + reps):
         timing.synchronize()
         start = time.perf_counter()
