# selftest-replaces: fa_backward_dkdv
# Variant: its own tiles, Bk ≠ Bq: 128 keys per program where a row fits in 64 bytes (else 64 or 32), 32-query
# tiles, 8 warps for the tall tiles. / 变体：自己的分块，Bk ≠ Bq：一行不超过 64 字节时每个程序 128 个键
# （否则 64 或 32），查询分块 32，高分块用 8 个 warp。
@@ -54 +54,2 @@
-    block = block_size(q)
+    row_bytes = d * q.element_size()
+    block_k = 128 if row_bytes <= 64 else 64 if row_bytes <= 128 else 32
@@ -56 +57 @@
-    flash_bwd_dkdv_kernel[(triton.cdiv(n_k, block), batch)](
+    flash_bwd_dkdv_kernel[(triton.cdiv(n_k, block_k), batch)](
@@ -60 +61 @@
-        HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal)
+        HEAD_DIM=d, BLOCK_Q=32, BLOCK_K=block_k, IS_CAUSAL=is_causal, num_warps=8 if block_k == 128 else 4)
