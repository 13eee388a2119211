# selftest-replaces: ai_intensity
# selftest-must-fail: test_arithmetic_intensity
# Mistake: counts softmax as 3 FLOPs per element (exp, sum, divide), forgetting the max and the subtraction.
# 错误：softmax 每个元素只算 3 FLOP（exp、求和、除法），漏掉了求最大值和减法。
@@ -7,5 +7,5 @@
     elif op == "softmax":
         rows, cols = shapes
-        flops, nbytes = 5 * rows * cols, 2 * e * rows * cols
+        flops, nbytes = 3 * rows * cols, 2 * e * rows * cols
     elif op in ("scores", "pv", "fused_attention"):
         n_q, n_k, d = shapes
@@ -15,5 +15,5 @@
             flops, nbytes = 2 * n_q * n_k * d, e * (n_q * n_k + n_k * d + n_q * d)
         else:
-            flops, nbytes = 4 * n_q * n_k * d + 6 * n_q * n_k, e * (2 * n_q * d + 2 * n_k * d)
+            flops, nbytes = 4 * n_q * n_k * d + 4 * n_q * n_k, e * (2 * n_q * d + 2 * n_k * d)
     else:
         raise ValueError(utils.bilingual(f"未知的操作 {op!r}", f"unknown op {op!r}"))
