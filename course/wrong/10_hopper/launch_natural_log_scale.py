# selftest-replaces: hopper_launch
# selftest-must-fail: test_hopper
# Mistake: passes σ instead of σ · log2 e to a kernel that uses exp2.
# 错误：给使用 exp2 的内核传 σ 而不是 σ · log2 e。
@@ -30 +30 @@
-        n_q, n_k, batch, d**-0.5 * LOG2E,
+        n_q, n_k, batch, d**-0.5,
