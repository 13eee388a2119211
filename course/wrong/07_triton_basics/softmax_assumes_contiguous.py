# selftest-replaces: softmax_rows
# selftest-must-fail: test_softmax_rows
# selftest-selfcheck-fails: test_softmax_rows
# Mistake: uses n_cols as the row stride (assumes a contiguous input). / 错误：假设输入连续，用列数当行步长。
@@ -5 +5 @@
-    x_row = x_ptr + row * stride_x_row
+    x_row = x_ptr + row * n_cols
@@ -11,2 +11,2 @@
-        x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
+        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
         m_new = tl.maximum(m, tl.max(x, axis=0))
@@ -17 +17 @@
-        x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
+        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
