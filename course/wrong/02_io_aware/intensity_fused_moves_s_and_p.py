# selftest-replaces: ai_intensity
# selftest-must-fail: test_arithmetic_intensity
# Mistake: fused attention still counts the bytes of S and P (as if they went to slow memory), and a multiply-add as one FLOP.
# 错误：融合注意力仍然计入 S 和 P 的字节（好像它们进了慢速内存），并且把一次乘加算作 1 FLOP。
@@ -4,5 +4,5 @@
     if op == "matmul":
         m, k, n = shapes
-        flops, nbytes = 2 * m * k * n, e * (m * k + k * n + m * n)
+        flops, nbytes = m * k * n, e * (m * k + k * n + m * n)
     elif op == "softmax":
         rows, cols = shapes
@@ -15,5 +15,6 @@
             flops, nbytes = 2 * n_q * n_k * d, e * (n_q * n_k + n_k * d + n_q * d)
         else:
-            flops, nbytes = 4 * n_q * n_k * d + 6 * n_q * n_k, e * (2 * n_q * d + 2 * n_k * d)
+            flops = 4 * n_q * n_k * d + 6 * n_q * n_k
+            nbytes = e * (2 * n_q * d + 2 * n_k * d + 4 * n_q * n_k)
     else:
         raise ValueError(utils.bilingual(f"未知的操作 {op!r}", f"unknown op {op!r}"))
