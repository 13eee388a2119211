# selftest-replaces: memory_model
# selftest-must-fail: test_memory_model
# selftest-selfcheck-fails: test_memory_model
# Mistake: forgets the CUDA softmax-backward scratch buffer: right on a CPU, one float32 N×N short in training on a GPU.
# 错误：忘了 CUDA softmax 反向的临时缓冲区：CPU 上正确，GPU 上训练时少算一个 float32 的 N×N。
@@ -13,2 +12,0 @@
-        if str(device).startswith("cuda"):
-            tensors["dP∘P (CUDA softmax-backward scratch)"] = scores * fp32
