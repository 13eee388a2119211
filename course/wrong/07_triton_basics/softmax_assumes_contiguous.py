# selftest-replaces: softmax_rows
# selftest-must-fail: test_softmax_rows
# selftest-selfcheck-fails: test_softmax_rows
# Mistake: uses n_cols as the row stride (assumes a contiguous input). / 错误：假设输入连续，用列数当行步长。
@@ -3,5 +3,5 @@
                    BLOCK_C: tl.constexpr):
     row = tl.program_id(0)
-    x_row = x_ptr + row * stride_x_row
+    x_row = x_ptr + row * n_cols
     y_row = y_ptr + row * stride_y_row
     m = tl.full((1,), float("-inf"), tl.float32)  # running maximum
@@ -9,5 +9,5 @@
     for c0 in range(0, n_cols, BLOCK_C):  # pass 1: maximum and sum together (online softmax)
         cols = c0 + tl.arange(0, BLOCK_C)
-        x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
+        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
         m_new = tl.maximum(m, tl.max(x, axis=0))
         total = total * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
@@ -15,5 +15,5 @@
     for c0 in range(0, n_cols, BLOCK_C):  # pass 2: normalise and store
         cols = c0 + tl.arange(0, BLOCK_C)
-        x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
+        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
         y = tl.exp(x - m) / total
         tl.store(y_row + cols * stride_y_col, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)
