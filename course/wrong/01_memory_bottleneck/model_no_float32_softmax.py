# selftest-replaces: memory_model
# selftest-must-fail: test_memory_model
# Mistake: counts every tensor in the input dtype: forgets that the softmax runs on float32 copies.
# 错误：所有张量都按输入 dtype 计：忘了 softmax 是在 float32 副本上计算的。
@@ -2,5 +2,5 @@
     '''{tensor name: bytes} alive at the peak of one standard-attention step (n ≥ 2·d); the values sum to the peak.'''
     size = dtype.itemsize  # bytes per element of Q, K, V, S, P, O
-    fp32 = torch.float32.itemsize  # the softmax runs in float32
+    fp32 = size
     scores = batch * heads * n * n  # elements of one N×N tensor
     rows = batch * heads * n * d  # elements of one N×d tensor
