# selftest-replaces: ws_forward
# selftest-must-fail: test_ws_forward
# selftest-selfcheck-fails: test_ws_forward
# Mistake: launches n_rows // BLOCK_ROWS programs, dropping the tail rows. / 错误：程序数用整除，丢掉了尾部的行。
@@ -23,5 +23,5 @@
     x2 = x.reshape(-1, n_cols)
     y = torch.empty(x2.shape[0], device=x.device, dtype=x.dtype)
-    grid = (triton.cdiv(x2.shape[0], BLOCK_ROWS),)
+    grid = (max(1, x2.shape[0] // BLOCK_ROWS),)
     weighted_sum_fwd_kernel[grid](x2, weight, y, x2.shape[0], n_cols, x2.stride(0), x2.stride(1),
                                   weight.stride(0), BLOCK_ROWS=BLOCK_ROWS, BLOCK_C=BLOCK_C)
