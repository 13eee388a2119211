# selftest-replaces: io_hbm_bytes
# selftest-must-fail: test_hbm_standard, test_hbm_flash
# Mistake: counts n // B query tiles, so the tail tile's reads of K and V are missing.
# 错误：查询块数算成 n // B，尾块对 K、V 的读取被漏掉了。
@@ -4,2 +4 @@
-    tiles = math.ceil(n / block_q)
-    return e * (2 * n * d + 2 * n * d * tiles + 4 * n * n)
+    return e * (2 * n * d + 2 * n * d * (n // block_q) + 4 * n * n)
@@ -15 +14 @@
-    return e * (2 * n * d + 2 * n * d * math.ceil(n / block)) + 4 * n
+    return e * (2 * n * d + 2 * n * d * max(1, n // block)) + 4 * n
