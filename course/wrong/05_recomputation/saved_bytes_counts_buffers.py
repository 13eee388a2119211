# selftest-notebook: recomputation.ipynb
# selftest-replaces: rc_saved_bytes
# selftest-must-fail: test_saved_bytes
# Mistake: leaves out the parameters but not the buffers, so a saved buffer counts as an activation.
# 错误：排除了参数却没有排除缓冲区，被保存的缓冲区算成了激活。
@@ -1,11 +1,9 @@
 def saved_bytes(module, x):
-    """Bytes of the distinct storages autograd saves for backward while module(x) runs, the module's
-    parameters and buffers left out."""
-    state = {t.untyped_storage().data_ptr() for t in [*module.parameters(), *module.buffers()]}
+    params = {p.untyped_storage().data_ptr() for p in module.parameters()}
     storages = {}

     def pack(tensor):
         storage = tensor.untyped_storage()
-        if storage.data_ptr() not in state:
+        if storage.data_ptr() not in params:
             storages[storage.data_ptr()] = storage.nbytes()
         return tensor
