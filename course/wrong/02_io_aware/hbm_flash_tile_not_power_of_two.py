# selftest-notebook: io_aware.ipynb
# selftest-replaces: io_hbm_bytes
# selftest-must-fail: test_hbm_flash
# Mistake: uses B = M / (4·d·e) itself, not the largest power of two below it.
# 错误：直接用 B = M / (4·d·e)，而不是不超过它的最大的 2 的幂。
@@ -2,6 +2,5 @@
     """HBM bytes of the three unfused kernels (one head, forward)."""
     e = dtype.itemsize
-    tiles = math.ceil(n / block_q)
-    return e * (2 * n * d + 2 * n * d * tiles + 4 * n * n)
+    return e * (2 * n * d + 2 * n * d * math.ceil(n / block_q) + 4 * n * n)


@@ -9,7 +8,6 @@
     """HBM bytes of the FlashAttention forward pass with the tiling rule (one head)."""
     e = dtype.itemsize
-    fit = sram_bytes // (4 * d * e)
-    if fit < 16:
+    block = sram_bytes // (4 * d * e)
+    if block < 16:
         raise ValueError(utils.bilingual("SRAM 放不下 16 行的分块", "the SRAM cannot hold tiles of 16 rows"))
-    block = 2 ** (fit.bit_length() - 1)
     return e * (2 * n * d + 2 * n * d * math.ceil(n / block)) + 4 * n
