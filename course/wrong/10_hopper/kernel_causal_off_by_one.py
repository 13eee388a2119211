# selftest-replaces: hopper_kernel
# selftest-must-fail: test_hopper
# Mistake: the causal mask hides the diagonal (j < i instead of j <= i).
# 错误：因果掩码把对角线也屏蔽了（j < i 而不是 j <= i）。
@@ -12 +12 @@
-            visible = visible & (cols[None, :] <= rows[:, None])
+            visible = visible & (cols[None, :] < rows[:, None])
