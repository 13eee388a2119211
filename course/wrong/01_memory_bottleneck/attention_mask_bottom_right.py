# selftest-replaces: standard_attention
# selftest-must-fail: test_standard_attention
# Mistake: aligns the causal mask bottom-right (query i sees keys j <= i + Nk - Nq): right only when Nq = Nk.
# 错误：因果掩码右下角对齐（查询 i 看键 j <= i + Nk - Nq），只有 Nq = Nk 时才对。
@@ -8,5 +8,5 @@
     if is_causal:
         n_q, n_k = S.shape[-2:]
-        later = torch.arange(n_k, device=S.device)[None, :] > torch.arange(n_q, device=S.device)[:, None]
+        later = torch.arange(n_k, device=S.device)[None, :] > torch.arange(n_q, device=S.device)[:, None] + (n_k - n_q)
         S = S.masked_fill(later, float("-inf"))
     P = torch.softmax(S.to(torch.promote_types(S.dtype, torch.float32)), dim=-1).to(Q.dtype)
