# selftest-notebook: io_aware.ipynb
# selftest-replaces: io_hbm_bytes
# selftest-must-fail: test_hbm_standard, test_hbm_flash
# Mistake: reads K and V once in total (the seed's "FlashAttention moves O(N·d)" claim), in both formulas.
# 错误：K 和 V 总共只读一次（原始笔记"FlashAttention 的流量是 O(N·d)"的说法），两个公式都这样算。
@@ -2,6 +2,5 @@
     """HBM bytes of the three unfused kernels (one head, forward)."""
     e = dtype.itemsize
-    tiles = math.ceil(n / block_q)
-    return e * (2 * n * d + 2 * n * d * tiles + 4 * n * n)
+    return e * (4 * n * d + 4 * n * n)


@@ -9,7 +8,5 @@
     """HBM bytes of the FlashAttention forward pass with the tiling rule (one head)."""
     e = dtype.itemsize
-    fit = sram_bytes // (4 * d * e)
-    if fit < 16:
+    if sram_bytes // (4 * d * e) < 16:
         raise ValueError(utils.bilingual("SRAM 放不下 16 行的分块", "the SRAM cannot hold tiles of 16 rows"))
-    block = 2 ** (fit.bit_length() - 1)
-    return e * (2 * n * d + 2 * n * d * math.ceil(n / block)) + 4 * n
+    return e * 4 * n * d + 4 * n
