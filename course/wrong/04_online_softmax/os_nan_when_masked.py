# selftest-replaces: os_online_softmax
# selftest-must-fail: test_online_softmax
# Mistake: subtracts the running maximum itself, so a block of -inf before any finite score gives e^(-inf + inf) = NaN.
# 错误：直接减去运行最大值，开头全是 -inf 的块得到 e^(-inf + inf) = NaN。
@@ -8,8 +8,8 @@
         block = x[..., c0 : c0 + block_size].to(work)
         m_new = torch.maximum(m, block.amax(dim=-1))
-        shift = finite_max(m_new)
+        shift = m_new
         row_sum = row_sum * torch.exp(m - shift) + torch.exp(block - shift[..., None]).sum(dim=-1)
         m = m_new
-    shift, inverse = finite_max(m), torch.where(row_sum > 0, 1 / row_sum, torch.zeros_like(row_sum))
+    shift, inverse = m, 1 / row_sum
     out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
     for c0 in range(0, n, block_size):
