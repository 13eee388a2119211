# selftest-replaces: hopper_kernel
# Variant: the persistent loop as a while loop over tile += programs.
# 变体：持久循环写成 while 循环，tile += 程序数。
@@ -26,5 +26,6 @@
 ):
     q_tiles = tl.cdiv(n_q, BLOCK_Q)
-    for tile in tl.range(tl.program_id(0), batch * q_tiles, tl.num_programs(0)):
+    tile = tl.program_id(0)
+    while tile < batch * q_tiles:
         b = tile // q_tiles
         q_start = (tile % q_tiles) * BLOCK_Q
@@ -47,2 +48,3 @@
         o = (acc / row_sum[:, None]).to(o_desc.dtype)
         o_desc.store([b, q_start, 0], o.reshape([1, BLOCK_Q, HEAD_DIM]))  # rows beyond Nq are clipped
+        tile += tl.num_programs(0)
