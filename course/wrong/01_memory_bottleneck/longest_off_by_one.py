# selftest-notebook: memory_bottleneck.ipynb
# selftest-replaces: max_sequence
# selftest-must-fail: test_max_sequence_length
# Mistake: returns the first N that no longer fits instead of the last one that does.
# 错误：返回第一个放不下的 N，而不是最后一个放得下的 N。
@@ -1,13 +1,10 @@
 def max_sequence_length(memory_bytes, batch, heads, d, dtype, training, device="cuda"):
-    '''The largest N whose modelled peak fits in memory_bytes (0 if not even N = 1 fits).'''
     def fits(n):
         return sum(attention_memory_bytes(batch, heads, n, d, dtype, training, device).values()) <= memory_bytes

-    if not fits(1):
-        return 0
-    low, high = 1, 2
-    while fits(high):  # double until it no longer fits
+    low, high = 0, 1
+    while fits(high):
         low, high = high, 2 * high
-    while high - low > 1:  # fits(low) and not fits(high)
+    while high - low > 1:
         middle = (low + high) // 2
         if fits(middle):
@@ -15,3 +12,3 @@
         else:
             high = middle
-    return low
+    return high
