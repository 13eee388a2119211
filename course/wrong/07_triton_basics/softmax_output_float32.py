# selftest-replaces: softmax_rows
# selftest-must-fail: test_softmax_rows
# selftest-selfcheck-fails: test_softmax_rows
# Mistake: always returns float32 (y allocated as float32, not in x's dtype). / 错误：输出总是 float32，没有用 x 的数据类型。
@@ -23 +23 @@
-    y = torch.empty_like(x)
+    y = torch.empty(x.shape, device=x.device, dtype=torch.float32)
