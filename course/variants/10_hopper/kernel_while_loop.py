# selftest-replaces: hopper_kernel
# Variant: the persistent loop as a while loop over tile += programs.
# 变体：持久循环写成 while 循环，tile += 程序数。
@@ -28 +28,2 @@
-    for tile in tl.range(tl.program_id(0), batch * q_tiles, tl.num_programs(0)):
+    tile = tl.program_id(0)
+    while tile < batch * q_tiles:
@@ -48 +49,2 @@
         o_desc.store([b, q_start, 0], o.reshape([1, BLOCK_Q, HEAD_DIM]))  # rows beyond Nq are clipped
+        tile += tl.num_programs(0)
