# selftest-replaces: fa_function
# selftest-must-fail: test_autograd_function
# Mistake: never passes is_causal on, so causal attention is computed without the mask.
# 错误：没有把 is_causal 传下去，因果注意力没有掩码。
@@ -4,5 +4,5 @@
     @staticmethod
     def forward(ctx, Q, K, V, is_causal=False):
-        out, L = flash_forward(Q, K, V, is_causal)
+        out, L = flash_forward(Q, K, V)
         ctx.save_for_backward(Q, K, V, out, L)
         ctx.is_causal = is_causal
@@ -12,4 +12,4 @@
     def backward(ctx, dO):
         Q, K, V, out, L = ctx.saved_tensors
-        dQ, dK, dV = flash_backward(Q, K, V, out, L, dO, ctx.is_causal)
+        dQ, dK, dV = flash_backward(Q, K, V, out, L, dO)
         return dQ, dK, dV, None
