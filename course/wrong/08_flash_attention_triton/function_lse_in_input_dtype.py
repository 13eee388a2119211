# selftest-replaces: fa_function
# selftest-must-fail: test_forward
# Mistake: allocates L in the input dtype instead of float32 (right for float32 inputs only).
# 错误：L 用了输入的数据类型而不是 float32（只有 float32 输入时才对）。
@@ -19,5 +19,5 @@
         block = block_size(q)
         o = torch.empty_like(q)
-        lse = torch.empty(batch, n_q, device=q.device, dtype=torch.float32)
+        lse = torch.empty(batch, n_q, device=q.device, dtype=q.dtype)
         flash_fwd_kernel[(triton.cdiv(n_q, block), batch)](
             q, k, v, o, lse, *q.stride(), *k.stride(), *v.stride(), *o.stride(), *lse.stride(),
