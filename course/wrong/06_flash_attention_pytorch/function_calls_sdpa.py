# selftest-replaces: fa_function
# selftest-must-fail: test_autograd_function
# Mistake: returns torch's scaled_dot_product_attention output from forward.
# 错误：forward 返回 torch 的 scaled_dot_product_attention 结果。
@@ -9 +9 @@
-        return out
+        return torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=is_causal)
