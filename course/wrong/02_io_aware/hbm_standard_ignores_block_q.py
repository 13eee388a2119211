# selftest-replaces: io_hbm_bytes
# selftest-must-fail: test_hbm_standard
# selftest-selfcheck-fails: test_hbm_standard
# Mistake: counts 64-row query tiles whatever block_q says.
# 错误：不管 block_q 是多少，都按 64 行的查询块计算。
@@ -2,5 +2,5 @@
     """HBM bytes of the three unfused kernels (one head, forward)."""
     e = dtype.itemsize
-    tiles = math.ceil(n / block_q)
+    tiles = math.ceil(n / 64)
     return e * (2 * n * d + 2 * n * d * tiles + 4 * n * n)
 
