# selftest-replaces: io_hbm_bytes
# selftest-must-fail: test_hbm_flash
# Mistake: forgets that the forward pass also writes L (one float32 per row).
# 错误：忘了前向传播还要写出 L（每行一个 float32）。
@@ -4,2 +4 @@
-    tiles = math.ceil(n / block_q)
-    return e * (2 * n * d + 2 * n * d * tiles + 4 * n * n)
+    return e * (2 * n * d + 2 * n * d * math.ceil(n / block_q) + 4 * n * n)
@@ -15 +14 @@
-    return e * (2 * n * d + 2 * n * d * math.ceil(n / block)) + 4 * n
+    return e * (2 * n * d + 2 * n * d * math.ceil(n / block))
