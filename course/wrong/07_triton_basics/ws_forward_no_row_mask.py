# selftest-replaces: ws_forward
# selftest-must-fail: test_ws_forward
# selftest-selfcheck-fails: test_ws_forward
# Mistake: no row mask: the last program reads and writes rows past the end (fails the same way every run). / 错误：没有行掩码：最后一个程序读写了末尾之后的行（每次都以同样的方式失败）。
@@ -7,5 +7,4 @@
                             BLOCK_ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
     rows = tl.program_id(0) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
-    row_ok = rows < n_rows
     acc = tl.zeros((BLOCK_ROWS,), dtype=tl.float32)
     for c0 in range(0, n_cols, BLOCK_C):
@@ -13,8 +12,8 @@
         col_ok = cols < n_cols
         x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :] * stride_col,
-                    mask=row_ok[:, None] & col_ok[None, :], other=0.0)
+                    mask=col_ok[None, :], other=0.0)
         w = tl.load(w_ptr + cols * stride_w, mask=col_ok, other=0.0)
         acc += tl.sum(x.to(tl.float32) * w.to(tl.float32)[None, :], axis=1)
-    tl.store(y_ptr + rows, acc.to(y_ptr.dtype.element_ty), mask=row_ok)
+    tl.store(y_ptr + rows, acc.to(y_ptr.dtype.element_ty))


