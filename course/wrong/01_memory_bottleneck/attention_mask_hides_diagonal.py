# selftest-replaces: standard_attention
# selftest-must-fail: test_standard_attention
# Mistake: the causal mask also hides the diagonal (j >= i): the first row is all -inf and its softmax is NaN.
# 错误：因果掩码把对角线也遮住（j >= i）：第一行全是 -inf，softmax 得到 NaN。
@@ -8,5 +8,5 @@
     if is_causal:
         n_q, n_k = S.shape[-2:]
-        later = torch.arange(n_k, device=S.device)[None, :] > torch.arange(n_q, device=S.device)[:, None]
+        later = torch.arange(n_k, device=S.device)[None, :] >= torch.arange(n_q, device=S.device)[:, None]
         S = S.masked_fill(later, float("-inf"))
     P = torch.softmax(S.to(torch.promote_types(S.dtype, torch.float32)), dim=-1).to(Q.dtype)
