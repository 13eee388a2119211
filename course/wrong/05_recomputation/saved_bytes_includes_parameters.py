# selftest-replaces: rc_saved_bytes
# selftest-must-fail: test_saved_bytes
# Mistake: counts every saved storage once, but the weights that Linear saves are counted as activations.
# 错误：每个存储只算一次，但把 Linear 保存的权重也算成了激活。
@@ -4 +3,0 @@
-    state = {t.untyped_storage().data_ptr() for t in [*module.parameters(), *module.buffers()]}
@@ -8,3 +7 @@
-        storage = tensor.untyped_storage()
-        if storage.data_ptr() not in state:
-            storages[storage.data_ptr()] = storage.nbytes()
+        storages[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes()
