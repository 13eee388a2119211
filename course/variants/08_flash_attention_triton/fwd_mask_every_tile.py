# selftest-replaces: fa_forward_kernel
# Variant: no causal tile skipping: every key tile is visited and the mask hides what a query may not see
# (slower for causal attention, same result). / 变体：不跳过因果分块：遍历每个键分块，由掩码隐藏查询看不到的键
# （因果注意力更慢，结果相同）。
@@ -23,4 +23 @@
-    k_end = n_k
-    if IS_CAUSAL:  # keys after this tile's last query are all masked: skip them
-        k_end = tl.minimum(n_k, (q_tile + 1) * BLOCK_Q)
-    for k0 in range(0, k_end, BLOCK_K):
+    for k0 in range(0, n_k, BLOCK_K):
