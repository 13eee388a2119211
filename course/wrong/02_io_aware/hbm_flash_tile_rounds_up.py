# selftest-replaces: io_hbm_bytes
# selftest-must-fail: test_hbm_flash
# selftest-selfcheck-fails: test_hbm_flash
# Mistake: rounds the tile up to the next power of two (four such tiles no longer fit in the SRAM).
# 错误：把块大小向上取到 2 的幂（四个这样的块放不进 SRAM 了）。
@@ -14 +14 @@
-    block = 2 ** (fit.bit_length() - 1)
+    block = 2 ** math.ceil(math.log2(fit))
