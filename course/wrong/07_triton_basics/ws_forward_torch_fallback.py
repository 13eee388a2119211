# selftest-replaces: ws_forward
# selftest-must-fail: test_ws_forward
# selftest-selfcheck-fails: test_ws_forward
# Mistake: computes the result with torch instead of the kernel. / 错误：用 torch 计算结果而不是内核。
@@ -24 +24,2 @@
-    y = torch.empty(x2.shape[0], device=x.device, dtype=x.dtype)
+    y = (x2.float() * weight.float()).sum(-1).to(x.dtype)
+    return y.reshape(x.shape[:-1])
