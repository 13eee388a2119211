# selftest-replaces: sl_benchmark
# selftest-must-fail: test_benchmark
# selftest-selfcheck-fails: test_benchmark
# Mistake: reports the mean of the timed calls instead of their median (the spread is right): a few slow calls pull it up. / 错误：报告计时调用的平均值而不是中位数（离散程度是对的）：几次慢的调用就把它拉高。
@@ -14 +14 @@
-    return statistics.median(samples), q3 - q1
+    return statistics.mean(samples), q3 - q1
