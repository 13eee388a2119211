# selftest-notebook: triton_basics.ipynb
# selftest-replaces: ws_backward
# selftest-must-fail: test_ws_backward
# selftest-selfcheck-fails: test_ws_backward
# Mistake: returns the first program's partial sum instead of adding all of them. / 错误：只返回第一个程序的部分和。
@@ -1,10 +1,10 @@
 @triton.jit
 def weighted_sum_bwd_kernel(x_ptr, w_ptr, grad_y_ptr, grad_x_ptr, partial_ptr, n_rows, n_cols,
-                            stride_row, stride_col, stride_w, stride_gy, stride_gx_row, stride_gx_col,
+                            stride_row, stride_col, stride_w, stride_gx_row, stride_gx_col,
                             BLOCK_ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
     pid = tl.program_id(0)
     rows = pid * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
     row_ok = rows < n_rows
-    g = tl.load(grad_y_ptr + rows * stride_gy, mask=row_ok, other=0.0).to(tl.float32)
+    g = tl.load(grad_y_ptr + rows, mask=row_ok, other=0.0).to(tl.float32)
     for c0 in range(0, n_cols, BLOCK_C):
         cols = c0 + tl.arange(0, BLOCK_C)
@@ -24,5 +24,5 @@
     x2 = x.reshape(-1, n_cols)
     n_rows = x2.shape[0]
-    g = grad_y.reshape(-1)  # stride 0 when autograd broadcast one number (the gradient of y.sum())
+    g = grad_y.reshape(-1).contiguous()  # the kernel reads grad_y with stride 1
     grad_x = torch.empty_like(x2)
     n_programs = triton.cdiv(n_rows, BLOCK_ROWS)
@@ -30,4 +30,4 @@
     weighted_sum_bwd_kernel[(n_programs,)](
         x2, weight, g, grad_x, partial, n_rows, n_cols, x2.stride(0), x2.stride(1), weight.stride(0),
-        g.stride(0), grad_x.stride(0), grad_x.stride(1), BLOCK_ROWS=BLOCK_ROWS, BLOCK_C=BLOCK_C)
-    return grad_x.reshape(x.shape), partial.sum(0).to(weight.dtype)
+        grad_x.stride(0), grad_x.stride(1), BLOCK_ROWS=BLOCK_ROWS, BLOCK_C=BLOCK_C)
+    return grad_x.reshape(x.shape), partial[0].to(weight.dtype)
