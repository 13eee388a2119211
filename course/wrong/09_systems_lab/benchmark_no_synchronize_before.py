# selftest-replaces: sl_benchmark
# selftest-must-fail: test_benchmark
# selftest-selfcheck-fails: test_benchmark
# Mistake: synchronises only before reading the timer, not before starting it: work still queued from before (the warm-up) lands in the timed call. / 错误：只在读取计时器前同步，开始计时前不同步：之前排队的工作（预热）落进了计时的调用。
@@ -6 +5,0 @@
-        timing.synchronize()
