# selftest-replaces: io_hbm_bytes
# selftest-must-fail: test_hbm_standard, test_hbm_flash
# Mistake: reads K and V once in total (the seed's "FlashAttention moves O(N·d)" claim), in both formulas.
# 错误：K 和 V 总共只读一次（原始笔记"FlashAttention 的流量是 O(N·d)"的说法），两个公式都这样算。
@@ -5 +5 @@
-    return e * (2 * n * d + 2 * n * d * tiles + 4 * n * n)
+    return e * (4 * n * d + 4 * n * n)
@@ -15 +15 @@
-    return e * (2 * n * d + 2 * n * d * math.ceil(n / block)) + 4 * n
+    return e * 4 * n * d + 4 * n
