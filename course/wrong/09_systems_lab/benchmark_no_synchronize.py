# selftest-replaces: sl_benchmark
# selftest-must-fail: test_benchmark
# selftest-selfcheck-fails: test_benchmark
# Mistake: never synchronises: on an asynchronous device it times the launches. / 错误：从不同步，在异步设备上只测到启动时间。
@@ -5,2 +5 @@
     for _ in range(reps):
-        timing.synchronize()
@@ -9 +7,0 @@
-        timing.synchronize()
