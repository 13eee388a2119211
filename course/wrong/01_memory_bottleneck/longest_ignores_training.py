# selftest-replaces: max_sequence
# selftest-must-fail: test_max_sequence_length
# Mistake: always asks the model for inference, whatever `training` says.
# 错误：不管 training 是什么，总是按推理计算。
@@ -4 +4 @@
-        return sum(attention_memory_bytes(batch, heads, n, d, dtype, training, device).values()) <= memory_bytes
+        return sum(attention_memory_bytes(batch, heads, n, d, dtype, False, device).values()) <= memory_bytes
