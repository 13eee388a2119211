# selftest-replaces: rc_saved_bytes
# selftest-must-fail: test_saved_bytes
# Mistake: leaves out the parameters but not the buffers, so a saved buffer counts as an activation.
# 错误：排除了参数却没有排除缓冲区，被保存的缓冲区算成了激活。
@@ -4 +4 @@
-    state = {t.untyped_storage().data_ptr() for t in [*module.parameters(), *module.buffers()]}
+    state = {t.untyped_storage().data_ptr() for t in module.parameters()}
