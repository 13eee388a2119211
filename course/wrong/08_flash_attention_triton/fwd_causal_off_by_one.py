# selftest-replaces: fa_forward_kernel
# selftest-must-fail: test_forward, test_dq
# Mistake: the causal mask j < i hides the diagonal (row 0 then sees no key at all).
# 错误：因果掩码写成 j < i，漏掉了对角线（第 0 行一个键也看不到）。
@@ -36 +36 @@
-            visible = visible & (cols[None, :] <= rows[:, None])
+            visible = visible & (cols[None, :] < rows[:, None])
