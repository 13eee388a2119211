# selftest-replaces: ws_forward
# selftest-must-fail: test_ws_forward
# selftest-selfcheck-fails: test_ws_forward
# Mistake: computes the result with torch instead of the kernel. / 错误：用 torch 计算结果而不是内核。
@@ -22,5 +22,6 @@
     n_cols = x.shape[-1]
     x2 = x.reshape(-1, n_cols)
-    y = torch.empty(x2.shape[0], device=x.device, dtype=x.dtype)
+    y = (x2.float() * weight.float()).sum(-1).to(x.dtype)
+    return y.reshape(x.shape[:-1])
     grid = (triton.cdiv(x2.shape[0], BLOCK_ROWS),)
     weighted_sum_fwd_kernel[grid](x2, weight, y, x2.shape[0], n_cols, x2.stride(0), x2.stride(1),
