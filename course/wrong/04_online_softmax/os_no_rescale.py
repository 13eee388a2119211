# selftest-replaces: os_online_softmax
# selftest-must-fail: test_online_softmax
# Mistake: when the maximum grows, the sum kept so far is not multiplied by e^(m - m').
# 错误：最大值变大时，没有把已累加的和乘以 e^(m - m')。
@@ -9,4 +9,2 @@
-        m_new = torch.maximum(m, block.amax(dim=-1))
-        shift = finite_max(m_new)
-        row_sum = row_sum * torch.exp(m - shift) + torch.exp(block - shift[..., None]).sum(dim=-1)
-        m = m_new
+        m = torch.maximum(m, block.amax(dim=-1))
+        row_sum = row_sum + torch.exp(block - finite_max(m)[..., None]).sum(dim=-1)
