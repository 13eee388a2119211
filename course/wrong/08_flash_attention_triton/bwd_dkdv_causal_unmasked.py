# selftest-replaces: fa_backward_dkdv
# selftest-must-fail: test_dv, test_dk, test_dq
# Mistake: skips the query tiles before the key tile but forgets the causal mask inside the diagonal tiles.
# 错误：跳过了键分块之前的查询分块，却忘了在对角分块内做因果掩码。
@@ -36,2 +35,0 @@
-        if IS_CAUSAL:
-            visible = visible & (cols[:, None] <= rows[None, :])
