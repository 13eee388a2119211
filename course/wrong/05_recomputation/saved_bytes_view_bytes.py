# selftest-replaces: rc_saved_bytes
# selftest-must-fail: test_saved_bytes
# selftest-selfcheck-fails: test_saved_bytes
# Mistake: counts each storage once but only the bytes of the saved view (numel × element_size): of the two halves
# from chunk only one half counts, though a view keeps its whole storage alive.
# 错误：按存储去重，却只算被保存的视图的字节（numel × element_size）：chunk 切出的两半只
# 算了一半，而视图让整个存储保持存活。
@@ -10 +10 @@
-            storages[storage.data_ptr()] = storage.nbytes()
+            storages[storage.data_ptr()] = tensor.numel() * tensor.element_size()
