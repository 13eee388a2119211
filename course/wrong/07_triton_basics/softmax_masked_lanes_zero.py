# selftest-replaces: softmax_rows
# selftest-must-fail: test_softmax_rows
# selftest-selfcheck-fails: test_softmax_rows
# Mistake: masked lanes load 0.0 instead of -inf in the max-and-sum pass (each adds e^(0 - m) to the sum). / 错误：求最大值和总和时掩码外的位置读成 0.0 而不是 -inf（每个都给总和加上 e^(0 - m)）。
@@ -11,2 +11,2 @@
-        x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
+        x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=0.0).to(tl.float32)
         m_new = tl.maximum(m, tl.max(x, axis=0))
