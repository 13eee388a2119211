# selftest-notebook: systems_lab.ipynb
# selftest-replaces: sl_benchmark
# selftest-must-fail: test_benchmark
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
@@ -9,6 +7,4 @@
         timing.synchronize()
         samples.append(time.perf_counter() - start)
-    if reps == 1:
-        return samples[0], 0.0
     q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
     return statistics.median(samples), q3 - q1
