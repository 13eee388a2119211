# selftest-replaces: fa_backward_dq
# selftest-must-fail: test_dq
# Mistake: forgets the softmax scale σ = 1/√d in dQ.
# 错误：dQ 忘了乘 softmax 缩放因子 σ = 1/√d。
@@ -41 +40,0 @@
-    dq = dq * scale
