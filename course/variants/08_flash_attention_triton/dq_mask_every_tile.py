# selftest-replaces: fa_backward_dq
# Variant: no causal skipping: every key tile is visited and the mask zeroes what is not seen.
# / 变体：不跳过因果分块：遍历每个键分块，由掩码把看不到的部分置零。
@@ -23,4 +23 @@
-    k_end = n_k
-    if IS_CAUSAL:
-        k_end = tl.minimum(n_k, (q_tile + 1) * BLOCK_Q)
-    for k0 in range(0, k_end, BLOCK_K):
+    for k0 in range(0, n_k, BLOCK_K):
