# selftest-replaces: os_weighted_sum
# selftest-must-fail: test_weighted_sum
# Mistake: rescales the running sum but not the output accumulator when the maximum grows.
# 错误：最大值变大时只重新缩放了运行和，没有缩放输出累加器。
@@ -15,5 +15,5 @@
         rescale = torch.exp(m - shift)
         row_sum = row_sum * rescale + p.sum(dim=-1)
-        acc = acc * rescale[..., None] + p @ v
+        acc = acc + p @ v
         m = m_new
     out = acc / torch.where(row_sum > 0, row_sum, torch.ones_like(row_sum))[..., None]
