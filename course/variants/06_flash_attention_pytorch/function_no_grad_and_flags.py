# selftest-replaces: fa_function
# Variant: runs the kernels under torch.no_grad, keeps is_causal in a dict on ctx, unpacks with a star. / 变体：在 torch.no_grad 下运行，把 is_causal 存在 ctx 上的字典里，用星号解包。
@@ -6,4 +6,5 @@
-        out, L = flash_forward(Q, K, V, is_causal)
-        ctx.save_for_backward(Q, K, V, out, L)
-        ctx.is_causal = is_causal
-        return out
+        with torch.no_grad():
+            O, L = flash_forward(Q, K, V, is_causal)
+        ctx.options = {"is_causal": is_causal}
+        ctx.save_for_backward(Q, K, V, O, L)
+        return O
@@ -13,2 +14,3 @@
-        Q, K, V, out, L = ctx.saved_tensors
-        dQ, dK, dV = flash_backward(Q, K, V, out, L, dO, ctx.is_causal)
+        *qkv, O, L = ctx.saved_tensors
+        with torch.no_grad():
+            dQ, dK, dV = flash_backward(*qkv, O, L, dO, ctx.options["is_causal"])
