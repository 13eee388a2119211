# selftest-replaces: hopper_kernel
# Variant: tiles ordered query-tile-major (the batch index varies fastest).
# 变体：分块按查询分块为主序排列（批下标变化最快）。
@@ -29,2 +29,2 @@
-        b = tile // q_tiles
-        q_start = (tile % q_tiles) * BLOCK_Q
+        b = tile % batch
+        q_start = (tile // batch) * BLOCK_Q
