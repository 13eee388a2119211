# selftest-replaces: fa_function
# Variant: makes dO contiguous, calls flash_backward with keyword arguments, casts the gradients explicitly. / 变体：把 dO 变为连续张量，用关键字参数调用 flash_backward，并显式转换梯度的类型。
@@ -6,2 +6,2 @@
-        out, L = flash_forward(Q, K, V, is_causal)
-        ctx.save_for_backward(Q, K, V, out, L)
+        result = flash_forward(Q, K, V, is_causal)
+        out, lse = result[0], result[1]
@@ -8 +8,2 @@
         ctx.is_causal = is_causal
+        ctx.save_for_backward(Q, K, V, out, lse)
@@ -13,2 +14,5 @@
-        Q, K, V, out, L = ctx.saved_tensors
-        dQ, dK, dV = flash_backward(Q, K, V, out, L, dO, ctx.is_causal)
+        Q, K, V, out, lse = ctx.saved_tensors
+        grads = flash_backward(
+            Q=Q, K=K, V=V, out=out, L=lse, dO=dO.contiguous(), is_causal=ctx.is_causal
+        )
+        dQ, dK, dV = (g.to(t.dtype) for g, t in zip(grads, (Q, K, V)))
