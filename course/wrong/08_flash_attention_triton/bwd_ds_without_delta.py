# selftest-replaces: fa_backward_dkdv
# selftest-must-fail: test_dk, test_dq
# Mistake: dS = P ∘ dP, forgetting to subtract Δ (dV is right: test_dv keeps its points).
# 错误：dS = P ∘ dP，忘了减去 Δ（dV 正确：test_dv 仍得分）。
@@ -39,5 +39,5 @@
         dv += tl.dot(pt.to(do.dtype), do)
         dpt = tl.dot(v, tl.trans(do))
-        dst = pt * (dpt - delta[None, :])
+        dst = pt * dpt
         dk += tl.dot(dst.to(q.dtype), q)
     dk = dk * scale
