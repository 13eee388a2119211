# selftest-notebook: systems_lab.ipynb
# selftest-replaces: sl_benchmark
# selftest-must-fail: test_benchmark
# Mistake: ignores warmup: the slow first calls are timed. / 错误：忽略预热，慢的前几次调用被计时。
@@ -1,5 +1,3 @@
 def benchmark(fn, warmup, reps):
-    for _ in range(warmup):
-        fn()
     samples = []
     for _ in range(reps):
@@ -9,6 +7,4 @@
         timing.synchronize()
         samples.append(time.perf_counter() - start)
-    if reps == 1:
-        return samples[0], 0.0
     q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
     return statistics.median(samples), q3 - q1
