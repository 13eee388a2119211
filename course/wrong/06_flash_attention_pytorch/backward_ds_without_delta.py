# selftest-replaces: fa_backward
# selftest-must-fail: test_backward, test_causal, test_autograd_function
# Mistake: dS = P * dP: forgets the −Δ term of the softmax Jacobian.
# 错误：dS = P ∘ dP：漏掉了 softmax 雅可比矩阵的 −Δ 项。
@@ -25,5 +25,5 @@
             dV[:, k0:k1] += p.transpose(-2, -1) @ do
             dp = do @ v.transpose(-2, -1)
-            ds = p * (dp - delta[:, q0:q1, None])
+            ds = p * dp
             dQ[:, q0:q1] += ds @ k * scale
             dK[:, k0:k1] += ds.transpose(-2, -1) @ q * scale
