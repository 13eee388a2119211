# selftest-replaces: sl_activation_memory
# selftest-must-fail: test_activation_memory
# selftest-selfcheck-fails: test_activation_memory
# Mistake: forgets LayerNorm's mean and rstd and the input ids. / 错误：漏掉 LayerNorm 的均值、rstd 和输入的 id。
@@ -5,2 +5,2 @@
-    per_block = (8 * tokens * d + 2 * tokens * d_ff + batch * heads * seq_len**2) * size + 4 * tokens * 4
-    return 8 * tokens + config.num_layers * per_block + 2 * tokens * d * size + 2 * tokens * 4
+    per_block = (8 * tokens * d + 2 * tokens * d_ff + batch * heads * seq_len**2) * size
+    return config.num_layers * per_block + 2 * tokens * d * size
