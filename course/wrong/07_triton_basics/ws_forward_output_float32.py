# selftest-replaces: ws_forward
# selftest-must-fail: test_ws_forward
# selftest-selfcheck-fails: test_ws_forward
# Mistake: always returns float32 (y allocated as float32, not in x's dtype). / 错误：输出总是 float32，没有用 x 的数据类型。
@@ -24 +24 @@
-    y = torch.empty(x2.shape[0], device=x.device, dtype=x.dtype)
+    y = torch.empty(x2.shape[0], device=x.device, dtype=torch.float32)
