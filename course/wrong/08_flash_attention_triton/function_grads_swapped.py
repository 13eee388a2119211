# selftest-replaces: fa_function
# selftest-must-fail: test_dq
# Mistake: returns (dK, dQ, dV) instead of (dQ, dK, dV).
# 错误：返回顺序写成了 (dK, dQ, dV)。
@@ -33,3 +33,3 @@
         dk, dv = launch_dkdv(q, k, v, grad_out, lse, delta, ctx.is_causal)
         dq = launch_dq(q, k, v, grad_out, lse, delta, ctx.is_causal)
-        return dq, dk, dv, None
+        return dk, dq, dv, None
