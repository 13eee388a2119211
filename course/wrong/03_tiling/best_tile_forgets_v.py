# selftest-replaces: tl_best_tile
# selftest-must-fail: test_best_tile
# Mistake: leaves the V tile out of the budget (only Q and K tiles in the inputs' dtype).
# 错误：预算里漏掉了 V 块（只算了 Q 和 K 块）。
@@ -6 +6 @@
-        return e * d * (block_q + 2 * block_k) + 4 * (block_q * d + block_q * block_k + 2 * block_q) <= sram_bytes
+        return e * d * (block_q + block_k) + 4 * (block_q * d + block_q * block_k + 2 * block_q) <= sram_bytes
