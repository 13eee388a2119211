# selftest-replaces: hopper_kernel
# selftest-must-fail: test_hopper
# Mistake: the causal mask hides the diagonal (j < i instead of j <= i).
# 错误：因果掩码把对角线也屏蔽了（j < i 而不是 j <= i）。
@@ -10,5 +10,5 @@
         visible = cols[None, :] < n_k
         if IS_CAUSAL:
-            visible = visible & (cols[None, :] <= rows[:, None])
+            visible = visible & (cols[None, :] < rows[:, None])
         s = tl.where(visible, s, float("-inf"))
     new_max = tl.maximum(row_max, tl.max(s, 1))
