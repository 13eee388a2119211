# selftest-replaces: sl_activation_memory
# selftest-must-fail: test_activation_memory
# selftest-selfcheck-fails: test_activation_memory
# Mistake: four bytes per element whatever the dtype. / 错误：不论 dtype，每个元素都按 4 字节算。
@@ -2 +2 @@
-    size = torch.empty((), dtype=dtype).element_size()
+    size = 4
