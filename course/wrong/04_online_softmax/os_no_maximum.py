# selftest-replaces: os_online_softmax
# selftest-must-fail: test_online_softmax
# Mistake: sums e^x in one sweep without a running maximum (the naive softmax in blocks: e^x overflows).
# 错误：一遍求 e^x 的和，不维护运行最大值（分块的朴素 softmax：e^x 会上溢）。
@@ -9 +9 @@
-        m_new = torch.maximum(m, block.amax(dim=-1))
+        m_new = torch.zeros_like(m)
