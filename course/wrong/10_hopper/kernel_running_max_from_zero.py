# selftest-replaces: hopper_kernel
# selftest-must-fail: test_hopper
# selftest-selfcheck-fails: test_hopper
# Mistake: starts the running maximum at 0 instead of −∞: a row whose scores are all far below 0 keeps m = 0, every exp2 underflows to 0 and O = 0 / 0 is NaN. / 错误：运行最大值从 0 而不是 −∞ 开始：分数全都远低于 0 的行 m 一直是 0，每个 exp2 都下溢为 0，O = 0 / 0 成了 NaN。
@@ -8 +8 @@
-        row_max = tl.full([BLOCK_Q], float("-inf"), dtype=tl.float32)
+        row_max = tl.zeros([BLOCK_Q], dtype=tl.float32)
