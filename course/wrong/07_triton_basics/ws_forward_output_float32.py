# selftest-replaces: ws_forward
# selftest-must-fail: test_ws_forward
# selftest-selfcheck-fails: test_ws_forward
# Mistake: always returns float32 (y allocated as float32, not in x's dtype). / 错误：输出总是 float32，没有用 x 的数据类型。
@@ -22,5 +22,5 @@
     n_cols = x.shape[-1]
     x2 = x.reshape(-1, n_cols)
-    y = torch.empty(x2.shape[0], device=x.device, dtype=x.dtype)
+    y = torch.empty(x2.shape[0], device=x.device, dtype=torch.float32)
     grid = (triton.cdiv(x2.shape[0], BLOCK_ROWS),)
     weighted_sum_fwd_kernel[grid](x2, weight, y, x2.shape[0], n_cols, x2.stride(0), x2.stride(1),
