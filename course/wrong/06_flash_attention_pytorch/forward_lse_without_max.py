# selftest-replaces: fa_forward
# selftest-must-fail: test_forward, test_causal, test_autograd_function
# Mistake: saves L = log(l) instead of m + log(l).
# 错误：保存 L = log ℓ，漏掉了 m。
@@ -34 +34 @@
-        L[:, q0:q1] = (m + torch.log(ell)).float()
+        L[:, q0:q1] = torch.log(ell).float()
