# selftest-replaces: hopper_kernel
# Variant: with a causal mask the longest query tiles run first.
# 变体：因果时最长的查询分块先算。
@@ -30 +30,3 @@
         q_start = (tile % q_tiles) * BLOCK_Q
+        if IS_CAUSAL:  # the last query tiles see the most keys: start them first
+            q_start = (q_tiles - 1 - tile % q_tiles) * BLOCK_Q
