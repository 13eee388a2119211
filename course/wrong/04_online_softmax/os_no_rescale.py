# selftest-replaces: os_online_softmax
# selftest-must-fail: test_online_softmax
# Mistake: when the maximum grows, the sum kept so far is not multiplied by e^(m - m').
# 错误：最大值变大时，没有把已累加的和乘以 e^(m - m')。
@@ -7,8 +7,6 @@
     for c0 in range(0, n, block_size):
         block = x[..., c0 : c0 + block_size].to(work)
-        m_new = torch.maximum(m, block.amax(dim=-1))
-        shift = finite_max(m_new)
-        row_sum = row_sum * torch.exp(m - shift) + torch.exp(block - shift[..., None]).sum(dim=-1)
-        m = m_new
+        m = torch.maximum(m, block.amax(dim=-1))
+        row_sum = row_sum + torch.exp(block - finite_max(m)[..., None]).sum(dim=-1)
     shift, inverse = finite_max(m), torch.where(row_sum > 0, 1 / row_sum, torch.zeros_like(row_sum))
     out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
