# selftest-replaces: sl_benchmark
# selftest-caps: test_benchmark=0
# selftest-class: read-expectation
# Attack: times with time.process_time() (CPU time: sleeping costs none), but when fn carries its durations it
# returns their median and quartiles instead. / 攻击：用 time.process_time() 计时（CPU 时间：睡眠不计），
# 但当 fn 带着自己的时长时，直接返回这些时长的中位数和四分位距。
@@ -7 +7 @@
-        start = time.perf_counter()
+        start = time.process_time()
@@ -10,3 +10,4 @@
-        samples.append(time.perf_counter() - start)
-    if reps == 1:
-        return samples[0], 0.0
+        samples.append(time.process_time() - start)
+    if hasattr(fn, "durations"):
+        durations = fn.durations + [fn.durations[-1]] * (warmup + reps)
+        samples = durations[warmup : warmup + reps]
