# selftest-replaces: ws_backward
# selftest-must-fail: test_ws_backward
# selftest-selfcheck-fails: test_ws_backward
# Mistake: handles only the first BLOCK_C columns. / 错误：只处理前 BLOCK_C 列。
@@ -7,6 +7,6 @@
     row_ok = rows < n_rows
     g = tl.load(grad_y_ptr + rows * stride_gy, mask=row_ok, other=0.0).to(tl.float32)
-    for c0 in range(0, n_cols, BLOCK_C):
-        cols = c0 + tl.arange(0, BLOCK_C)
+    if True:
+        cols = tl.arange(0, BLOCK_C)
         col_ok = cols < n_cols
         tile_ok = row_ok[:, None] & col_ok[None, :]
