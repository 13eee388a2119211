# selftest-replaces: fa_function
# selftest-must-fail: test_autograd_function
# Mistake: never passes is_causal on, so causal attention is computed without the mask.
# 错误：没有把 is_causal 传下去，因果注意力没有掩码。
@@ -6 +6 @@
-        out, L = flash_forward(Q, K, V, is_causal)
+        out, L = flash_forward(Q, K, V)
@@ -14 +14 @@
-        dQ, dK, dV = flash_backward(Q, K, V, out, L, dO, ctx.is_causal)
+        dQ, dK, dV = flash_backward(Q, K, V, out, L, dO)
