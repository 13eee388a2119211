# selftest-replaces: standard_attention
# selftest-must-fail: test_standard_attention
# Mistake: aligns the causal mask bottom-right (query i sees keys j <= i + Nk - Nq): right only when Nq = Nk.
# 错误：因果掩码右下角对齐（查询 i 看键 j <= i + Nk - Nq），只有 Nq = Nk 时才对。
@@ -10 +10 @@
-        later = torch.arange(n_k, device=S.device)[None, :] > torch.arange(n_q, device=S.device)[:, None]
+        later = torch.arange(n_k, device=S.device)[None, :] > torch.arange(n_q, device=S.device)[:, None] + (n_k - n_q)
