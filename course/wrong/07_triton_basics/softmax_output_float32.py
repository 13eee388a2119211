# selftest-replaces: softmax_rows
# selftest-must-fail: test_softmax_rows
# selftest-selfcheck-fails: test_softmax_rows
# Mistake: always returns float32 (y allocated as float32, not in x's dtype). / 错误：输出总是 float32，没有用 x 的数据类型。
@@ -21,5 +21,5 @@

 def softmax_rows(x, block_c=128):
-    y = torch.empty_like(x)
+    y = torch.empty(x.shape, device=x.device, dtype=torch.float32)
     softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), x.stride(1), y.stride(0), y.stride(1),
                                   BLOCK_C=block_c)
