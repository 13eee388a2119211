# selftest-replaces: ai_intensity
# selftest-must-fail: test_arithmetic_intensity
# Mistake: assumes 4 bytes per element whatever the dtype (float16 halves the bytes and doubles the intensity).
# 错误：不管 dtype 都按每个元素 4 字节算（float16 的字节减半，强度翻倍）。
@@ -3 +3 @@
-    e = dtype.itemsize
+    e = 4
