# selftest-replaces: fa_backward
# selftest-must-fail: test_backward, test_causal, test_autograd_function
# Mistake: accumulates dV with the unnormalised exp(S) instead of P = exp(S - L).
# 错误：用未归一化的 exp(S) 而不是 P = exp(S − L) 累加 dV。
@@ -25 +25 @@
-            dV[:, k0:k1] += p.transpose(-2, -1) @ do
+            dV[:, k0:k1] += torch.exp(score_tile(q, k, q0, k0, scale, is_causal)).transpose(-2, -1) @ do
