# selftest-replaces: fa_backward
# selftest-must-fail: test_backward, test_causal, test_autograd_function
# Mistake: dS = P * dP: forgets the −Δ term of the softmax Jacobian.
# 错误：dS = P ∘ dP：漏掉了 softmax 雅可比矩阵的 −Δ 项。
@@ -27 +27 @@
-            ds = p * (dp - delta[:, q0:q1, None])
+            ds = p * dp
