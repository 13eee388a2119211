# selftest-replaces: os_weighted_sum
# selftest-must-fail: test_weighted_sum
# Mistake: subtracts the running maximum itself and divides by l unguarded: fully masked rows become NaN.
# 错误：直接减去运行最大值、不加保护地除以 l：整行被遮住的行变成 NaN。
@@ -11,5 +11,5 @@
         v = values[..., c0 : c0 + block_size, :].to(work)
         m_new = torch.maximum(m, s.amax(dim=-1))
-        shift = finite_max(m_new)
+        shift = m_new
         p = torch.exp(s - shift[..., None])
         rescale = torch.exp(m - shift)
@@ -17,4 +17,4 @@
         acc = acc * rescale[..., None] + p @ v
         m = m_new
-    out = acc / torch.where(row_sum > 0, row_sum, torch.ones_like(row_sum))[..., None]
+    out = acc / row_sum[..., None]
     return out.to(values.dtype), (m + torch.log(row_sum)).float()
