# selftest-replaces: os_online_softmax
# selftest-must-fail: test_online_softmax
# Mistake: subtracts the running maximum itself, so a block of -inf before any finite score gives e^(-inf + inf) = NaN.
# 错误：直接减去运行最大值，开头全是 -inf 的块得到 e^(-inf + inf) = NaN。
@@ -10 +10 @@
-        shift = finite_max(m_new)
+        shift = m_new
@@ -13 +13 @@
-    shift, inverse = finite_max(m), torch.where(row_sum > 0, 1 / row_sum, torch.zeros_like(row_sum))
+    shift, inverse = m, 1 / row_sum
