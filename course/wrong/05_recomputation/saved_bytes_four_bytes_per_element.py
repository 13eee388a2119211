# selftest-replaces: rc_saved_bytes
# selftest-must-fail: test_saved_bytes
# Mistake: assumes float32 everywhere: 4 bytes per element, so bfloat16 activations count double.
# 错误：默认一切都是 float32，每个元素 4 字节，于是 bfloat16 的激活算成了两倍。
@@ -10 +10 @@
-            storages[storage.data_ptr()] = storage.nbytes()
+            storages[storage.data_ptr()] = storage.nbytes() // tensor.element_size() * 4
