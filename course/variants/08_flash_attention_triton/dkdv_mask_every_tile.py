# selftest-replaces: fa_backward_dkdv
# Variant: no causal skipping: every query tile is visited and the mask zeroes what is not seen.
# / 变体：不跳过因果分块：遍历每个查询分块，由掩码把看不到的部分置零。
@@ -22,4 +22 @@
-    q_start = 0
-    if IS_CAUSAL:  # queries before this tile's first key see none of its keys
-        q_start = (k_tile * BLOCK_K // BLOCK_Q) * BLOCK_Q
-    for q0 in range(q_start, n_q, BLOCK_Q):
+    for q0 in range(0, n_q, BLOCK_Q):
