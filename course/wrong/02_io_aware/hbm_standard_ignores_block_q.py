# selftest-replaces: io_hbm_bytes
# selftest-must-fail: test_hbm_standard
# selftest-selfcheck-fails: test_hbm_standard
# Mistake: counts 64-row query tiles whatever block_q says.
# 错误：不管 block_q 是多少，都按 64 行的查询块计算。
@@ -4 +4 @@
-    tiles = math.ceil(n / block_q)
+    tiles = math.ceil(n / 64)
