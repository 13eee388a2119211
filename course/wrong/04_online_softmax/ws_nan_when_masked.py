# selftest-replaces: os_weighted_sum
# selftest-must-fail: test_weighted_sum
# Mistake: subtracts the running maximum itself and divides by l unguarded: fully masked rows become NaN.
# 错误：直接减去运行最大值、不加保护地除以 l：整行被遮住的行变成 NaN。
@@ -13 +13 @@
-        shift = finite_max(m_new)
+        shift = m_new
@@ -19 +19 @@
-    out = acc / torch.where(row_sum > 0, row_sum, torch.ones_like(row_sum))[..., None]
+    out = acc / row_sum[..., None]
