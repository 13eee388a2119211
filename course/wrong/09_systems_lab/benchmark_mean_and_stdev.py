# selftest-replaces: sl_benchmark
# selftest-must-fail: test_benchmark
# selftest-selfcheck-fails: test_benchmark
# Mistake: reports the mean and the standard deviation instead of the median and the interquartile range. / 错误：报告平均值和标准差，而不是中位数和四分位距。
@@ -11,4 +11 @@
-    if reps == 1:
-        return samples[0], 0.0
-    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
-    return statistics.median(samples), q3 - q1
+    return statistics.mean(samples), statistics.stdev(samples)
