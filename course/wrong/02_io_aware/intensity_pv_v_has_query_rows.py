# selftest-replaces: ai_intensity
# selftest-must-fail: test_arithmetic_intensity
# selftest-selfcheck-fails: test_arithmetic_intensity
# Mistake: in pv, counts V as Nq×d (V has a row per key: Nk×d): right only when Nq = Nk.
# 错误：pv 中把 V 算成 Nq×d（V 每个键一行：Nk×d）：只有 Nq = Nk 时才对。
@@ -15 +15 @@
-            flops, nbytes = 2 * n_q * n_k * d, e * (n_q * n_k + n_k * d + n_q * d)
+            flops, nbytes = 2 * n_q * n_k * d, e * (n_q * n_k + n_q * d + n_q * d)
