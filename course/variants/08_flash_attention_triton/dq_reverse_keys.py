# selftest-replaces: fa_backward_dq
# Variant: visits the key tiles from the last to the first (the sum does not depend on the order).
# / 变体：从最后一个键分块往前遍历（求和与顺序无关）。
@@ -26 +26,3 @@
-    for k0 in range(0, k_end, BLOCK_K):
+    n_tiles = tl.cdiv(k_end, BLOCK_K)
+    for i in range(0, n_tiles):
+        k0 = (n_tiles - 1 - i) * BLOCK_K
