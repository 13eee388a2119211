# selftest-replaces: ws_backward
# selftest-must-fail: test_ws_backward
# selftest-selfcheck-fails: test_ws_backward
# Mistake: returns the first program's partial sum instead of adding all of them. / 错误：只返回第一个程序的部分和。
@@ -33 +33 @@
-    return grad_x.reshape(x.shape), partial.sum(0).to(weight.dtype)
+    return grad_x.reshape(x.shape), partial[0].to(weight.dtype)
