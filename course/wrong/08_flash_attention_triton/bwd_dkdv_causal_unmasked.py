# selftest-replaces: fa_backward_dkdv
# selftest-must-fail: test_dv, test_dk, test_dq
# Mistake: skips the query tiles before the key tile but forgets the causal mask inside the diagonal tiles.
# 错误：跳过了键分块之前的查询分块，却忘了在对角分块内做因果掩码。
@@ -34,6 +34,4 @@
         st = tl.dot(k, tl.trans(q)) * scale  # Sᵀ, (BLOCK_K, BLOCK_Q): no tl.trans of a tl.dot result
         visible = col_ok[:, None] & row_ok[None, :]
-        if IS_CAUSAL:
-            visible = visible & (cols[:, None] <= rows[None, :])
         pt = tl.where(visible, tl.exp(st - lse[None, :]), 0.0)
         dv += tl.dot(pt.to(do.dtype), do)
