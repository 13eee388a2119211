# selftest-replaces: os_weighted_sum
# selftest-must-fail: test_weighted_sum
# Mistake: returns L = log l, forgetting the running maximum it was taken under (L = m + log l).
# 错误：返回 L = log l，忘了加上求和时所用的运行最大值（L = m + log l）。
@@ -20 +20 @@
-    return out.to(values.dtype), (m + torch.log(row_sum)).float()
+    return out.to(values.dtype), torch.log(row_sum).float()
