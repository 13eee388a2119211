# selftest-replaces: ai_intensity
# selftest-must-fail: test_arithmetic_intensity
# Mistake: counts softmax as 3 FLOPs per element (exp, sum, divide), forgetting the max and the subtraction.
# 错误：softmax 每个元素只算 3 FLOP（exp、求和、除法），漏掉了求最大值和减法。
@@ -9 +9 @@
-        flops, nbytes = 5 * rows * cols, 2 * e * rows * cols
+        flops, nbytes = 3 * rows * cols, 2 * e * rows * cols
@@ -17 +17 @@
-            flops, nbytes = 4 * n_q * n_k * d + 6 * n_q * n_k, e * (2 * n_q * d + 2 * n_k * d)
+            flops, nbytes = 4 * n_q * n_k * d + 4 * n_q * n_k, e * (2 * n_q * d + 2 * n_k * d)
