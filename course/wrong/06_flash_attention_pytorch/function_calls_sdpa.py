# selftest-replaces: fa_function
# selftest-must-fail: test_autograd_function
# Mistake: returns torch's scaled_dot_product_attention output from forward.
# 错误：forward 返回 torch 的 scaled_dot_product_attention 结果。
@@ -7,5 +7,5 @@
         ctx.save_for_backward(Q, K, V, out, L)
         ctx.is_causal = is_causal
-        return out
+        return torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=is_causal)

     @staticmethod
