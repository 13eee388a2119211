# selftest-replaces: fa_forward
# selftest-must-fail: test_forward, test_causal, test_autograd_function
# Mistake: saves L = log(l) instead of m + log(l).
# 错误：保存 L = log ℓ，漏掉了 m。
@@ -32,4 +32,4 @@
             m = m_new
         out[:, q0:q1] = (acc / ell[..., None]).to(Q.dtype)
-        L[:, q0:q1] = (m + torch.log(ell)).float()
+        L[:, q0:q1] = torch.log(ell).float()
     return out, L
