# selftest-replaces: sl_activation_memory
# selftest-must-fail: test_activation_memory
# selftest-selfcheck-fails: test_activation_memory
# Mistake: four bytes per element whatever the dtype. / 错误：不论 dtype，每个元素都按 4 字节算。
@@ -1,4 +1,4 @@
 def activation_memory_bytes(config, batch, seq_len, dtype):
-    size = torch.empty((), dtype=dtype).element_size()
+    size = 4
     tokens = batch * seq_len
     d, d_ff, heads = config.d_model, config.d_ff, config.num_heads
