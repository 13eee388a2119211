# selftest-replaces: tl_best_tile
# selftest-must-fail: test_best_tile
# selftest-selfcheck-fails: test_best_tile
# Mistake: requires the tiles to need strictly fewer bytes than the budget (< instead of ≤), so a tile that fits exactly is refused.
# 错误：要求块需要的字节严格小于预算（用了 < 而不是 ≤），恰好放得下的块被拒绝。
@@ -6 +6 @@
-        return e * d * (block_q + 2 * block_k) + 4 * (block_q * d + block_q * block_k + 2 * block_q) <= sram_bytes
+        return e * d * (block_q + 2 * block_k) + 4 * (block_q * d + block_q * block_k + 2 * block_q) < sram_bytes
