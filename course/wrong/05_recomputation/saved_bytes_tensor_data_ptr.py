# selftest-replaces: rc_saved_bytes
# selftest-must-fail: test_saved_bytes
# selftest-selfcheck-fails: test_saved_bytes
# Mistake: tells storages apart by the tensor's data_ptr() instead of the storage's: two views of one storage (the
# halves from chunk) start at different addresses, so the whole storage counts twice.
# 错误：用张量的 data_ptr() 而不是存储的去重：同一存储的两个视图（chunk 的两半）起始地址不同，整
# 个存储被算了两次。
@@ -10 +10 @@
-            storages[storage.data_ptr()] = storage.nbytes()
+            storages[tensor.data_ptr()] = storage.nbytes()
