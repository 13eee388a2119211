# selftest-replaces: fa_backward_dkdv
# selftest-must-fail: test_dk, test_dq
# Mistake: forgets the softmax scale σ = 1/√d in dK (dV is right: test_dv keeps its points).
# 错误：dK 忘了乘 softmax 缩放因子 σ = 1/√d（dV 正确：test_dv 仍得分）。
@@ -43 +42,0 @@
-    dk = dk * scale
