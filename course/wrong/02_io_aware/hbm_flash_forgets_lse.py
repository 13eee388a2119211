# selftest-replaces: io_hbm_bytes
# selftest-must-fail: test_hbm_flash
# Mistake: forgets that the forward pass also writes L (one float32 per row).
# 错误：忘了前向传播还要写出 L（每行一个 float32）。
@@ -2,6 +2,5 @@
     """HBM bytes of the three unfused kernels (one head, forward)."""
     e = dtype.itemsize
-    tiles = math.ceil(n / block_q)
-    return e * (2 * n * d + 2 * n * d * tiles + 4 * n * n)
+    return e * (2 * n * d + 2 * n * d * math.ceil(n / block_q) + 4 * n * n)


@@ -13,3 +12,3 @@
         raise ValueError(utils.bilingual("SRAM 放不下 16 行的分块", "the SRAM cannot hold tiles of 16 rows"))
     block = 2 ** (fit.bit_length() - 1)
-    return e * (2 * n * d + 2 * n * d * math.ceil(n / block)) + 4 * n
+    return e * (2 * n * d + 2 * n * d * math.ceil(n / block))
