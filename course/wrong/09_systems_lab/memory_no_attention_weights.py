# selftest-replaces: sl_activation_memory
# selftest-must-fail: test_activation_memory
# selftest-selfcheck-fails: test_activation_memory
# Mistake: forgets the softmax output P (B·h·N² per block). / 错误：漏掉 softmax 的输出 P（每块 B·h·N²）。
@@ -5 +5 @@
-    per_block = (8 * tokens * d + 2 * tokens * d_ff + batch * heads * seq_len**2) * size + 4 * tokens * 4
+    per_block = (8 * tokens * d + 2 * tokens * d_ff) * size + 4 * tokens * 4
