# selftest-replaces: fa_function
# selftest-must-fail: test_forward, test_dq
# Mistake: launches Nq // block query programs: the tail rows (and every row when Nq < block) are never computed.
# 错误：查询程序数用了整除 Nq // block：尾部的查询行（Nq < block 时所有行）都没有计算。
@@ -20,5 +20,5 @@
         o = torch.empty_like(q)
         lse = torch.empty(batch, n_q, device=q.device, dtype=torch.float32)
-        flash_fwd_kernel[(triton.cdiv(n_q, block), batch)](
+        flash_fwd_kernel[(n_q // block, batch)](
             q, k, v, o, lse, *q.stride(), *k.stride(), *v.stride(), *o.stride(), *lse.stride(),
             n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal)
