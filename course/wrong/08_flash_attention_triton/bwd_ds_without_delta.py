# selftest-replaces: fa_backward_dkdv
# selftest-must-fail: test_dk, test_dq
# Mistake: dS = P ∘ dP, forgetting to subtract Δ (dV is right: test_dv keeps its points).
# 错误：dS = P ∘ dP，忘了减去 Δ（dV 正确：test_dv 仍得分）。
@@ -41 +41 @@
-        dst = pt * (dpt - delta[None, :])
+        dst = pt * dpt
