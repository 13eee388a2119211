# selftest-replaces: tl_best_tile
# selftest-must-fail: test_best_tile
# selftest-selfcheck-fails: test_best_tile
# Mistake: counts the score tile in the inputs' dtype instead of float32, so in float16 it picks tiles that do not fit.
# 错误：分数块按输入的 dtype 计，而不是 float32；float16 时选出的块放不下。
@@ -6 +6 @@
-        return e * d * (block_q + 2 * block_k) + 4 * (block_q * d + block_q * block_k + 2 * block_q) <= sram_bytes
+        return e * d * (block_q + 2 * block_k) + 4 * (block_q * d + 2 * block_q) + e * block_q * block_k <= sram_bytes
