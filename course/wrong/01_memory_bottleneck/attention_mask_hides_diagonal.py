# selftest-replaces: standard_attention
# selftest-must-fail: test_standard_attention
# Mistake: the causal mask also hides the diagonal (j >= i): the first row is all -inf and its softmax is NaN.
# 错误：因果掩码把对角线也遮住（j >= i）：第一行全是 -inf，softmax 得到 NaN。
@@ -10 +10 @@
-        later = torch.arange(n_k, device=S.device)[None, :] > torch.arange(n_q, device=S.device)[:, None]
+        later = torch.arange(n_k, device=S.device)[None, :] >= torch.arange(n_q, device=S.device)[:, None]
