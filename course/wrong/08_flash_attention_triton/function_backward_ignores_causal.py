# selftest-replaces: fa_function
# selftest-must-fail: test_dq
# Mistake: the forward remembers is_causal but the backward always launches the non-causal kernels.
# 错误：前向传播记下了 is_causal，反向传播却总是启动非因果的内核。
@@ -31,5 +31,5 @@
         q, k, v, o, lse = ctx.saved_tensors
         delta = (grad_out.float() * o.float()).sum(-1)  # Δ = rowsum(dO ∘ O): float32, (B, Nq)
-        dk, dv = launch_dkdv(q, k, v, grad_out, lse, delta, ctx.is_causal)
-        dq = launch_dq(q, k, v, grad_out, lse, delta, ctx.is_causal)
+        dk, dv = launch_dkdv(q, k, v, grad_out, lse, delta, False)
+        dq = launch_dq(q, k, v, grad_out, lse, delta, False)
         return dq, dk, dv, None
