# selftest-replaces: io_hbm_bytes
# selftest-must-fail: test_hbm_flash
# selftest-selfcheck-fails: test_hbm_flash
# Mistake: uses B = M / (4·d·e) itself, not the largest power of two below it.
# 错误：直接用 B = M / (4·d·e)，而不是不超过它的最大的 2 的幂。
@@ -14 +14 @@
-    block = 2 ** (fit.bit_length() - 1)
+    block = fit
