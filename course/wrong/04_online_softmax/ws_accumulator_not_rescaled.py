# selftest-notebook: online_softmax.ipynb
# selftest-replaces: os_weighted_sum
# selftest-must-fail: test_weighted_sum
# Mistake: rescales the running sum but not the output accumulator when the maximum grows.
# 错误：最大值变大时只重新缩放了运行和，没有缩放输出累加器。
@@ -1,4 +1,3 @@
 def online_softmax_weighted_sum(scores, values, block_size):
-    """(O, L): O = softmax(scores) @ values, L = m + log ℓ, in one sweep over blocks of keys."""
     n_k = scores.shape[-1]
     work = torch.promote_types(torch.promote_types(scores.dtype, values.dtype), torch.float32)
@@ -9,11 +8,9 @@
     for c0 in range(0, n_k, block_size):
         s = scores[..., c0 : c0 + block_size].to(work)
-        v = values[..., c0 : c0 + block_size, :].to(work)
         m_new = torch.maximum(m, s.amax(dim=-1))
         shift = finite_max(m_new)
         p = torch.exp(s - shift[..., None])
-        rescale = torch.exp(m - shift)
-        row_sum = row_sum * rescale + p.sum(dim=-1)
-        acc = acc * rescale[..., None] + p @ v
+        row_sum = row_sum * torch.exp(m - shift) + p.sum(dim=-1)
+        acc = acc + p @ values[..., c0 : c0 + block_size, :].to(work)
         m = m_new
     out = acc / torch.where(row_sum > 0, row_sum, torch.ones_like(row_sum))[..., None]
