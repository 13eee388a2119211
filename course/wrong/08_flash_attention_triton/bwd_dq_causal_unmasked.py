# selftest-replaces: fa_backward_dq
# selftest-must-fail: test_dq
# Mistake: stops at the diagonal key tile but forgets the causal mask inside it.
# 错误：在对角键分块处停下，却忘了在分块内做因果掩码。
@@ -33,6 +33,4 @@
         s = tl.dot(q, tl.trans(k)) * scale
         visible = row_ok[:, None] & col_ok[None, :]
-        if IS_CAUSAL:
-            visible = visible & (cols[None, :] <= rows[:, None])
         p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
         dp = tl.dot(do, tl.trans(v))
