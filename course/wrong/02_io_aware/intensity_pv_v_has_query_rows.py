# selftest-replaces: ai_intensity
# selftest-must-fail: test_arithmetic_intensity
# selftest-selfcheck-fails: test_arithmetic_intensity
# Mistake: in pv, counts V as Nq×d (V has a row per key: Nk×d): right only when Nq = Nk.
# 错误：pv 中把 V 算成 Nq×d（V 每个键一行：Nk×d）：只有 Nq = Nk 时才对。
@@ -13,5 +13,5 @@
             flops, nbytes = 2 * n_q * n_k * d + n_q * n_k, e * (n_q * d + n_k * d + n_q * n_k)
         elif op == "pv":
-            flops, nbytes = 2 * n_q * n_k * d, e * (n_q * n_k + n_k * d + n_q * d)
+            flops, nbytes = 2 * n_q * n_k * d, e * (n_q * n_k + n_q * d + n_q * d)
         else:
             flops, nbytes = 4 * n_q * n_k * d + 6 * n_q * n_k, e * (2 * n_q * d + 2 * n_k * d)
