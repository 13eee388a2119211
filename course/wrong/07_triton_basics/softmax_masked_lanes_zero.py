# selftest-replaces: softmax_rows
# selftest-must-fail: test_softmax_rows
# selftest-selfcheck-fails: test_softmax_rows
# Mistake: masked lanes load 0.0 instead of -inf in the max-and-sum pass (each adds e^(0 - m) to the sum). / 错误：求最大值和总和时掩码外的位置读成 0.0 而不是 -inf（每个都给总和加上 e^(0 - m)）。
@@ -9,5 +9,5 @@
     for c0 in range(0, n_cols, BLOCK_C):  # pass 1: maximum and sum together (online softmax)
         cols = c0 + tl.arange(0, BLOCK_C)
-        x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
+        x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=0.0).to(tl.float32)
         m_new = tl.maximum(m, tl.max(x, axis=0))
         total = total * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
