# selftest-replaces: io_hbm_bytes
# selftest-must-fail: test_hbm_flash
# selftest-selfcheck-fails: test_hbm_flash
# Mistake: uses B = M / (4·d·e) itself, not the largest power of two below it.
# 错误：直接用 B = M / (4·d·e)，而不是不超过它的最大的 2 的幂。
@@ -12,4 +12,4 @@
     if fit < 16:
         raise ValueError(utils.bilingual("SRAM 放不下 16 行的分块", "the SRAM cannot hold tiles of 16 rows"))
-    block = 2 ** (fit.bit_length() - 1)
+    block = fit
     return e * (2 * n * d + 2 * n * d * math.ceil(n / block)) + 4 * n
