# selftest-replaces: hopper_launch
# selftest-must-fail: test_hopper
# Mistake: passes σ instead of σ · log2 e to a kernel that uses exp2.
# 错误：给使用 exp2 的内核传 σ 而不是 σ · log2 e。
@@ -28,5 +28,5 @@
     hopper_fwd_kernel[(programs,)](
         descriptor(q, block_q), descriptor(k, block_k), descriptor(v, block_k), descriptor(out, block_q),
-        n_q, n_k, batch, d**-0.5 * LOG2E,
+        n_q, n_k, batch, d**-0.5,
         HEAD_DIM=d, BLOCK_Q=block_q, BLOCK_K=block_k, IS_CAUSAL=is_causal, num_warps=warps, num_stages=stages,
     )
