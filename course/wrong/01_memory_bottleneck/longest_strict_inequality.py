# selftest-replaces: max_sequence
# selftest-must-fail: test_max_sequence_length
# selftest-selfcheck-fails: test_max_sequence_length
# Mistake: a peak exactly equal to the memory counts as not fitting (< instead of <=).
# 错误：峰值恰好等于内存时算作放不下（用了 < 而不是 <=）。
@@ -4 +4 @@
-        return sum(attention_memory_bytes(batch, heads, n, d, dtype, training, device).values()) <= memory_bytes
+        return sum(attention_memory_bytes(batch, heads, n, d, dtype, training, device).values()) < memory_bytes
