# selftest-replaces: fa_function
# Variant: saves (L, O, Q, K, V) in another order and unpacks them the same way. / 变体：按另一种顺序保存 (L, O, Q, K, V)，并按同样顺序取出。
@@ -6,4 +6,4 @@
-        out, L = flash_forward(Q, K, V, is_causal)
-        ctx.save_for_backward(Q, K, V, out, L)
-        ctx.is_causal = is_causal
-        return out
+        O, L = flash_forward(Q, K, V, is_causal=is_causal)
+        ctx.save_for_backward(L, O, Q, K, V)
+        ctx.causal = bool(is_causal)
+        return O
@@ -13,2 +13,2 @@
-        Q, K, V, out, L = ctx.saved_tensors
-        dQ, dK, dV = flash_backward(Q, K, V, out, L, dO, ctx.is_causal)
+        L, O, Q, K, V = ctx.saved_tensors
+        dQ, dK, dV = flash_backward(Q, K, V, O, L, dO, is_causal=ctx.causal)
