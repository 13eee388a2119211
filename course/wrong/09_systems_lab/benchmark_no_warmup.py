# selftest-replaces: sl_benchmark
# selftest-must-fail: test_benchmark
# selftest-selfcheck-fails: test_benchmark
# Mistake: ignores warmup: the slow first calls are timed. / 错误：忽略预热，慢的前几次调用被计时。
@@ -2,2 +1,0 @@
-    for _ in range(warmup):
-        fn()
