# selftest-replaces: sl_benchmark
# selftest-must-fail: test_benchmark
# selftest-selfcheck-fails: test_benchmark
# Mistake: never synchronises: on an asynchronous device it times the launches. / 错误：从不同步，在异步设备上只测到启动时间。
@@ -4,11 +4,7 @@
     samples = []
     for _ in range(reps):
-        timing.synchronize()
         start = time.perf_counter()
         fn()
-        timing.synchronize()
         samples.append(time.perf_counter() - start)
-    if reps == 1:
-        return samples[0], 0.0
     q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
     return statistics.median(samples), q3 - q1
