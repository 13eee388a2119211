# selftest-replaces: fa_function
# Variant: the forward uses tall query tiles and short key tiles (Bq = 128, Bk = 32 where a query row fits in
# 128 bytes, else 64 × 32) with 8 warps for the tall tiles; the backward keeps block_size.
# / 变体：前向用高查询分块、矮键分块（一行查询不超过 128 字节时 Bq = 128、Bk = 32，否则 64 × 32），高分块用
# 8 个 warp；反向仍用 block_size。
@@ -19 +19 @@
-        block = block_size(q)
+        block_q = 128 if d * q.element_size() <= 128 else 64
@@ -22 +22 @@
-        flash_fwd_kernel[(triton.cdiv(n_q, block), batch)](
+        flash_fwd_kernel[(triton.cdiv(n_q, block_q), batch)](
@@ -24 +24,2 @@
-            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal)
+            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block_q, BLOCK_K=32, IS_CAUSAL=is_causal,
+            num_warps=8 if block_q == 128 else 4)
