# selftest-replaces: sl_activation_memory
# selftest-must-fail: test_activation_memory
# selftest-selfcheck-fails: test_activation_memory
# Mistake: uses context_length instead of seq_len for the N² term. / 错误：N² 一项用了 context_length 而不是 seq_len。
@@ -5 +5 @@
-    per_block = (8 * tokens * d + 2 * tokens * d_ff + batch * heads * seq_len**2) * size + 4 * tokens * 4
+    per_block = (8 * tokens * d + 2 * tokens * d_ff + batch * heads * config.context_length**2) * size + 4 * tokens * 4
