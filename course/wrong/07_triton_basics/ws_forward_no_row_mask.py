# selftest-replaces: ws_forward
# selftest-must-fail: test_ws_forward
# selftest-selfcheck-fails: test_ws_forward
# Mistake: no row mask: the last program reads and writes rows past the end (fails the same way every run). / 错误：没有行掩码：最后一个程序读写了末尾之后的行（每次都以同样的方式失败）。
@@ -9 +8,0 @@
-    row_ok = rows < n_rows
@@ -15 +14 @@
-                    mask=row_ok[:, None] & col_ok[None, :], other=0.0)
+                    mask=col_ok[None, :], other=0.0)
@@ -18 +17 @@
-    tl.store(y_ptr + rows, acc.to(y_ptr.dtype.element_ty), mask=row_ok)
+    tl.store(y_ptr + rows, acc.to(y_ptr.dtype.element_ty))
