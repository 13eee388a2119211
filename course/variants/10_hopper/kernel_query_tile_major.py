# selftest-replaces: hopper_kernel
# Variant: tiles ordered query-tile-major (the batch index varies fastest).
# 变体：分块按查询分块为主序排列（批下标变化最快）。
@@ -27,6 +27,6 @@
     q_tiles = tl.cdiv(n_q, BLOCK_Q)
     for tile in tl.range(tl.program_id(0), batch * q_tiles, tl.num_programs(0)):
-        b = tile // q_tiles
-        q_start = (tile % q_tiles) * BLOCK_Q
+        b = tile % batch
+        q_start = (tile // batch) * BLOCK_Q
         rows = q_start + tl.arange(0, BLOCK_Q)
         q = q_desc.load([b, q_start, 0]).reshape([BLOCK_Q, HEAD_DIM])
