# selftest-replaces: sl_benchmark
# Variant: torch.quantile on a float64 tensor of samples. / 变体：对 float64 的样本张量用 torch.quantile。
@@ -11,4 +11,2 @@
-    if reps == 1:
-        return samples[0], 0.0
-    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
-    return statistics.median(samples), q3 - q1
+    q1, median, q3 = torch.quantile(torch.tensor(samples, dtype=torch.float64), torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64)).tolist()
+    return median, q3 - q1
