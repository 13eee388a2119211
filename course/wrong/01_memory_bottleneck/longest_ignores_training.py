# selftest-notebook: memory_bottleneck.ipynb
# selftest-replaces: max_sequence
# selftest-must-fail: test_max_sequence_length
# Mistake: always asks the model for inference, whatever `training` says.
# 错误：不管 training 是什么，总是按推理计算。
@@ -1,13 +1,12 @@
 def max_sequence_length(memory_bytes, batch, heads, d, dtype, training, device="cuda"):
-    '''The largest N whose modelled peak fits in memory_bytes (0 if not even N = 1 fits).'''
     def fits(n):
-        return sum(attention_memory_bytes(batch, heads, n, d, dtype, training, device).values()) <= memory_bytes
+        return sum(attention_memory_bytes(batch, heads, n, d, dtype, False, device).values()) <= memory_bytes

     if not fits(1):
         return 0
     low, high = 1, 2
-    while fits(high):  # double until it no longer fits
+    while fits(high):
         low, high = high, 2 * high
-    while high - low > 1:  # fits(low) and not fits(high)
+    while high - low > 1:
         middle = (low + high) // 2
         if fits(middle):
