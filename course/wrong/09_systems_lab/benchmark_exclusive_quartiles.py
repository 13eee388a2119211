# selftest-replaces: sl_benchmark
# selftest-must-fail: test_benchmark
# selftest-selfcheck-fails: test_benchmark
# Mistake: takes the quartiles with statistics.quantiles' default method ("exclusive"), not method="inclusive". / 错误：用 statistics.quantiles 默认的方法（"exclusive"）取四分位数，而不是 method="inclusive"。
@@ -13 +13 @@
-    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
+    q1, _, q3 = statistics.quantiles(samples, n=4)
