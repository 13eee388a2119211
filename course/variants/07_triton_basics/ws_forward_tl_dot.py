# selftest-replaces: ws_forward
# Variant: the row sums as a tile matrix product tl.dot (w in column 0 of a BLOCK_C×16 tile, float32 "ieee"). / 变体：用分块矩阵乘 tl.dot 求行和（w 放在 BLOCK_C×16 分块的第 0 列，float32 "ieee" 精度）。
@@ -1,2 +1,2 @@
-BLOCK_ROWS = 16
-BLOCK_C = 64
+BLOCK_ROWS = 32
+BLOCK_C = 32
@@ -10 +10,2 @@
-    acc = tl.zeros((BLOCK_ROWS,), dtype=tl.float32)
+    lane = tl.arange(0, 16)  # tl.dot needs every dimension to be at least 16
+    acc = tl.zeros((BLOCK_ROWS, 16), dtype=tl.float32)
@@ -15,4 +16,6 @@
-                    mask=row_ok[:, None] & col_ok[None, :], other=0.0)
-        w = tl.load(w_ptr + cols * stride_w, mask=col_ok, other=0.0)
-        acc += tl.sum(x.to(tl.float32) * w.to(tl.float32)[None, :], axis=1)
-    tl.store(y_ptr + rows, acc.to(y_ptr.dtype.element_ty), mask=row_ok)
+                    mask=row_ok[:, None] & col_ok[None, :], other=0.0).to(tl.float32)
+        w = tl.load(w_ptr + cols * stride_w, mask=col_ok, other=0.0).to(tl.float32)
+        w_tile = tl.where(lane[None, :] == 0, w[:, None], 0.0)  # (BLOCK_C, 16), w in column 0
+        acc = tl.dot(x, w_tile, acc, input_precision="ieee")
+    y = tl.sum(acc, axis=1)  # columns 1..15 are zero
+    tl.store(y_ptr + rows, y.to(y_ptr.dtype.element_ty), mask=row_ok)
@@ -25,3 +28,3 @@
-    grid = (triton.cdiv(x2.shape[0], BLOCK_ROWS),)
-    weighted_sum_fwd_kernel[grid](x2, weight, y, x2.shape[0], n_cols, x2.stride(0), x2.stride(1),
-                                  weight.stride(0), BLOCK_ROWS=BLOCK_ROWS, BLOCK_C=BLOCK_C)
+    weighted_sum_fwd_kernel[(triton.cdiv(x2.shape[0], BLOCK_ROWS),)](
+        x2, weight, y, x2.shape[0], n_cols, x2.stride(0), x2.stride(1), weight.stride(0),
+        BLOCK_ROWS=BLOCK_ROWS, BLOCK_C=BLOCK_C, num_warps=4)
