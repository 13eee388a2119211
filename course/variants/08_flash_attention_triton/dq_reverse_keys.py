# selftest-replaces: fa_backward_dq
# Variant: visits the key tiles from the last to the first (the sum does not depend on the order).
# / 变体：从最后一个键分块往前遍历（求和与顺序无关）。
@@ -24,5 +24,7 @@
     if IS_CAUSAL:
         k_end = tl.minimum(n_k, (q_tile + 1) * BLOCK_Q)
-    for k0 in range(0, k_end, BLOCK_K):
+    n_tiles = tl.cdiv(k_end, BLOCK_K)
+    for i in range(0, n_tiles):
+        k0 = (n_tiles - 1 - i) * BLOCK_K
         cols = k0 + tl.arange(0, BLOCK_K)
         col_ok = cols < n_k
