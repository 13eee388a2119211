# selftest-replaces: fa_function
# selftest-must-fail: test_dq
# Mistake: the forward remembers is_causal but the backward always launches the non-causal kernels.
# 错误：前向传播记下了 is_causal，反向传播却总是启动非因果的内核。
@@ -33,2 +33,2 @@
-        dk, dv = launch_dkdv(q, k, v, grad_out, lse, delta, ctx.is_causal)
-        dq = launch_dq(q, k, v, grad_out, lse, delta, ctx.is_causal)
+        dk, dv = launch_dkdv(q, k, v, grad_out, lse, delta, False)
+        dq = launch_dq(q, k, v, grad_out, lse, delta, False)
