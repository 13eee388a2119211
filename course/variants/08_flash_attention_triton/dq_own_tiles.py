# selftest-replaces: fa_backward_dq
# Variant: its own tiles, Bq ≠ Bk: 32-query tiles, key tiles of block_size (64, or 32 for wide rows), 2 stages.
# / 变体：自己的分块，Bq ≠ Bk：查询分块 32，键分块用 block_size（64，行宽时 32），2 级流水。
@@ -52 +52 @@
-    flash_bwd_dq_kernel[(triton.cdiv(n_q, block), batch)](
+    flash_bwd_dq_kernel[(triton.cdiv(n_q, 32), batch)](
@@ -56 +56 @@
-        HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal)
+        HEAD_DIM=d, BLOCK_Q=32, BLOCK_K=block, IS_CAUSAL=is_causal, num_stages=2)
