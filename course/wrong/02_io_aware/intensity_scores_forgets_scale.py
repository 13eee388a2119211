# selftest-replaces: ai_intensity
# selftest-must-fail: test_arithmetic_intensity
# selftest-selfcheck-fails: test_arithmetic_intensity
# Mistake: the scores step counts only the product's 2·Nq·Nk·d FLOPs and forgets the scale σ (one FLOP per score).
# 错误：scores 这一步只计乘积的 2·Nq·Nk·d FLOP，忘了缩放 σ（每个分数 1 FLOP）。
@@ -13 +13 @@
-            flops, nbytes = 2 * n_q * n_k * d + n_q * n_k, e * (n_q * d + n_k * d + n_q * n_k)
+            flops, nbytes = 2 * n_q * n_k * d, e * (n_q * d + n_k * d + n_q * n_k)
