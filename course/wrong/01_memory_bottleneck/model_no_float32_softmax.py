# selftest-replaces: memory_model
# selftest-must-fail: test_memory_model
# Mistake: counts every tensor in the input dtype: forgets that the softmax runs on float32 copies.
# 错误：所有张量都按输入 dtype 计：忘了 softmax 是在 float32 副本上计算的。
@@ -4 +4 @@
-    fp32 = torch.float32.itemsize  # the softmax runs in float32
+    fp32 = size
