# selftest-notebook: online_softmax.ipynb
# selftest-replaces: os_weighted_sum
# selftest-must-fail: test_weighted_sum
# Mistake: returns L = log l, forgetting the running maximum it was taken under (L = m + log l).
# 错误：返回 L = log l，忘了加上求和时所用的运行最大值（L = m + log l）。
@@ -1,4 +1,3 @@
 def online_softmax_weighted_sum(scores, values, block_size):
-    """(O, L): O = softmax(scores) @ values, L = m + log ℓ, in one sweep over blocks of keys."""
     n_k = scores.shape[-1]
     work = torch.promote_types(torch.promote_types(scores.dtype, values.dtype), torch.float32)
@@ -9,5 +8,4 @@
     for c0 in range(0, n_k, block_size):
         s = scores[..., c0 : c0 + block_size].to(work)
-        v = values[..., c0 : c0 + block_size, :].to(work)
         m_new = torch.maximum(m, s.amax(dim=-1))
         shift = finite_max(m_new)
@@ -15,6 +13,6 @@
         rescale = torch.exp(m - shift)
         row_sum = row_sum * rescale + p.sum(dim=-1)
-        acc = acc * rescale[..., None] + p @ v
+        acc = acc * rescale[..., None] + p @ values[..., c0 : c0 + block_size, :].to(work)
         m = m_new
     out = acc / torch.where(row_sum > 0, row_sum, torch.ones_like(row_sum))[..., None]
-    return out.to(values.dtype), (m + torch.log(row_sum)).float()
+    return out.to(values.dtype), torch.log(row_sum).float()
