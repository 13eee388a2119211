# selftest-replaces: ai_intensity
# selftest-must-fail: test_arithmetic_intensity
# Mistake: fused attention still counts the bytes of S and P (as if they went to slow memory), and a multiply-add as one FLOP.
# 错误：融合注意力仍然计入 S 和 P 的字节（好像它们进了慢速内存），并且把一次乘加算作 1 FLOP。
@@ -6 +6 @@
-        flops, nbytes = 2 * m * k * n, e * (m * k + k * n + m * n)
+        flops, nbytes = m * k * n, e * (m * k + k * n + m * n)
@@ -17 +17,2 @@
-            flops, nbytes = 4 * n_q * n_k * d + 6 * n_q * n_k, e * (2 * n_q * d + 2 * n_k * d)
+            flops = 4 * n_q * n_k * d + 6 * n_q * n_k
+            nbytes = e * (2 * n_q * d + 2 * n_k * d + 4 * n_q * n_k)
