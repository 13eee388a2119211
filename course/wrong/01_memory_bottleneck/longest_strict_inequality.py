# selftest-replaces: max_sequence
# selftest-must-fail: test_max_sequence_length
# selftest-selfcheck-fails: test_max_sequence_length
# Mistake: a peak exactly equal to the memory counts as not fitting (< instead of <=).
# 错误：峰值恰好等于内存时算作放不下（用了 < 而不是 <=）。
@@ -2,5 +2,5 @@
     '''The largest N whose modelled peak fits in memory_bytes (0 if not even N = 1 fits).'''
     def fits(n):
-        return sum(attention_memory_bytes(batch, heads, n, d, dtype, training, device).values()) <= memory_bytes
+        return sum(attention_memory_bytes(batch, heads, n, d, dtype, training, device).values()) < memory_bytes
 
     if not fits(1):
