# selftest-replaces: fa_function
# Variant: saves a tuple built beforehand, reads ctx.saved_tensors by index, returns a tuple expression. / 变体：先组好元组再保存，按下标读取 ctx.saved_tensors，返回一个元组表达式。
@@ -6,2 +6,3 @@
-        out, L = flash_forward(Q, K, V, is_causal)
-        ctx.save_for_backward(Q, K, V, out, L)
+        O, L = flash_forward(Q, K, V, is_causal)
+        to_save = (Q, K, V, O, L)
+        ctx.save_for_backward(*to_save)
@@ -9 +10 @@
-        return out
+        return O
@@ -13,3 +14,3 @@
-        Q, K, V, out, L = ctx.saved_tensors
-        dQ, dK, dV = flash_backward(Q, K, V, out, L, dO, ctx.is_causal)
-        return dQ, dK, dV, None
+        saved = ctx.saved_tensors
+        grads = flash_backward(saved[0], saved[1], saved[2], saved[3], saved[4], dO, ctx.is_causal)
+        return tuple(grads) + (None,)
