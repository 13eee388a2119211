# selftest-replaces: fa_backward_dq
# selftest-must-fail: test_dq
# Mistake: stops at the diagonal key tile but forgets the causal mask inside it.
# 错误：在对角键分块处停下，却忘了在分块内做因果掩码。
@@ -35,2 +34,0 @@
-        if IS_CAUSAL:
-            visible = visible & (cols[None, :] <= rows[:, None])
