# selftest-replaces: rc_saved_bytes
# selftest-must-fail: test_saved_bytes
# Mistake: adds up the bytes of every saved tensor, so a tensor saved twice (ReLU's output) counts twice.
# 错误：把每个被保存的张量的字节都加起来，被保存两次的张量（ReLU 的输出）算了两次。
@@ -10 +10 @@
-            storages[storage.data_ptr()] = storage.nbytes()
+            storages[len(storages)] = tensor.numel() * tensor.element_size()
