# selftest-replaces: fa_function
# selftest-must-fail: test_autograd_function
# Mistake: keeps L as a ctx attribute instead of saving it with save_for_backward (breaks the contract).
# 错误：把 L 存成 ctx 的属性，而不是用 save_for_backward 保存（违反约定）。
@@ -5,5 +5,6 @@
     def forward(ctx, Q, K, V, is_causal=False):
         out, L = flash_forward(Q, K, V, is_causal)
-        ctx.save_for_backward(Q, K, V, out, L)
+        ctx.save_for_backward(Q, K, V, out)
+        ctx.L = L
         ctx.is_causal = is_causal
         return out
@@ -11,5 +12,6 @@
     @staticmethod
     def backward(ctx, dO):
-        Q, K, V, out, L = ctx.saved_tensors
+        Q, K, V, out = ctx.saved_tensors
+        L = ctx.L
         dQ, dK, dV = flash_backward(Q, K, V, out, L, dO, ctx.is_causal)
         return dQ, dK, dV, None
