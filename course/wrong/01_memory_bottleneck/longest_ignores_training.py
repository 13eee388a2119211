# selftest-replaces: max_sequence
# selftest-must-fail: test_max_sequence_length
# Mistake: always asks the model for inference, whatever `training` says.
# 错误：不管 training 是什么，总是按推理计算。
@@ -2,5 +2,5 @@
     '''The largest N whose modelled peak fits in memory_bytes (0 if not even N = 1 fits).'''
     def fits(n):
-        return sum(attention_memory_bytes(batch, heads, n, d, dtype, training, device).values()) <= memory_bytes
+        return sum(attention_memory_bytes(batch, heads, n, d, dtype, False, device).values()) <= memory_bytes

     if not fits(1):
