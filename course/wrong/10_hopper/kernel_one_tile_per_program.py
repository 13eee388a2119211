# selftest-replaces: hopper_kernel
# selftest-must-fail: test_hopper
# Mistake: a persistent grid whose programs compute only their first tile: the tiles beyond the grid are never computed.
# 错误：持久网格的程序只算第一个分块：网格之外的分块从未被计算。
@@ -28 +28 @@
-    for tile in tl.range(tl.program_id(0), batch * q_tiles, tl.num_programs(0)):
+    for tile in tl.range(tl.program_id(0), tl.program_id(0) + 1):
