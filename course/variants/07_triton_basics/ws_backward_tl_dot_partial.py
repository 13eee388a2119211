# selftest-replaces: ws_backward
# Variant: the partial sums Σ_r g[r]·x[r, :] as a tl.dot of a 16×BLOCK_ROWS tile (g in row 0) with the x tile. / 变体：部分和 Σ_r g[r]·x[r, :] 用 tl.dot 计算：16×BLOCK_ROWS 的分块（g 在第 0 行）乘以 x 分块。
@@ -1 +1,5 @@
+BWD_ROWS = 32
+BWD_D = 32
+
+
 @triton.jit
@@ -3 +7 @@
-                            stride_row, stride_col, stride_w, stride_gy, stride_gx_row, stride_gx_col,
+                            stride_row, stride_col, stride_w, stride_gx_row, stride_gx_col,
@@ -8 +12,3 @@
-    g = tl.load(grad_y_ptr + rows * stride_gy, mask=row_ok, other=0.0).to(tl.float32)
+    g = tl.load(grad_y_ptr + rows, mask=row_ok, other=0.0).to(tl.float32)
+    lane = tl.arange(0, 16)  # tl.dot needs dimensions of at least 16
+    g_tile = tl.where(lane[:, None] == 0, g[None, :], 0.0)  # (16, BLOCK_ROWS), g in row 0
@@ -16 +21,0 @@
-        grad_x = g[:, None] * w[None, :]
@@ -18,2 +23,3 @@
-                 grad_x.to(grad_x_ptr.dtype.element_ty), mask=tile_ok)
-        tl.store(partial_ptr + pid * n_cols + cols, tl.sum(g[:, None] * x, axis=0), mask=col_ok)
+                 (g[:, None] * w[None, :]).to(grad_x_ptr.dtype.element_ty), mask=tile_ok)
+        sums = tl.dot(g_tile, x, input_precision="ieee")  # (16, BLOCK_C), only row 0 non-zero
+        tl.store(partial_ptr + pid * n_cols + cols, tl.sum(sums, axis=0), mask=col_ok)
@@ -25,2 +31,2 @@
-    n_rows = x2.shape[0]
-    g = grad_y.reshape(-1)  # stride 0 when autograd broadcast one number (the gradient of y.sum())
+    n = x2.shape[0]
+    g = grad_y.reshape(-1).contiguous()
@@ -28,5 +34,5 @@
-    n_programs = triton.cdiv(n_rows, BLOCK_ROWS)
-    partial = torch.empty(n_programs, n_cols, device=x.device, dtype=torch.float32)
-    weighted_sum_bwd_kernel[(n_programs,)](
-        x2, weight, g, grad_x, partial, n_rows, n_cols, x2.stride(0), x2.stride(1), weight.stride(0),
-        g.stride(0), grad_x.stride(0), grad_x.stride(1), BLOCK_ROWS=BLOCK_ROWS, BLOCK_C=BLOCK_C)
+    grid = (triton.cdiv(n, BWD_ROWS),)
+    partial = torch.empty(grid[0], n_cols, device=x.device, dtype=torch.float32)
+    weighted_sum_bwd_kernel[grid](x2, weight, g, grad_x, partial, n, n_cols, x2.stride(0), x2.stride(1),
+                                  weight.stride(0), grad_x.stride(0), grad_x.stride(1),
+                                  BLOCK_ROWS=BWD_ROWS, BLOCK_C=BWD_D)
