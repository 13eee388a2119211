# selftest-replaces: ws_backward
# selftest-must-fail: test_ws_backward
# selftest-selfcheck-fails: test_ws_backward
# Mistake: returns the first program's partial sum instead of adding all of them. / 错误：只返回第一个程序的部分和。
@@ -31,3 +31,3 @@
         x2, weight, g, grad_x, partial, n_rows, n_cols, x2.stride(0), x2.stride(1), weight.stride(0),
         g.stride(0), grad_x.stride(0), grad_x.stride(1), BLOCK_ROWS=BLOCK_ROWS, BLOCK_C=BLOCK_C)
-    return grad_x.reshape(x.shape), partial.sum(0).to(weight.dtype)
+    return grad_x.reshape(x.shape), partial[0].to(weight.dtype)
