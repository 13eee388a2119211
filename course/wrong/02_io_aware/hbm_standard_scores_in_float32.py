# selftest-replaces: io_hbm_bytes
# selftest-must-fail: test_hbm_standard
# selftest-selfcheck-fails: test_hbm_standard
# Mistake: counts S and P as float32 whatever the inputs' dtype (the kernels store them in the inputs' dtype).
# 错误：不管输入的 dtype，都把 S 和 P 按 float32 计（内核按输入的 dtype 存储它们）。
@@ -4,2 +4 @@
-    tiles = math.ceil(n / block_q)
-    return e * (2 * n * d + 2 * n * d * tiles + 4 * n * n)
+    return e * (2 * n * d + 2 * n * d * math.ceil(n / block_q)) + 4 * 4 * n * n
