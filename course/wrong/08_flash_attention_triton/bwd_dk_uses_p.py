# selftest-replaces: fa_backward_dkdv
# selftest-must-fail: test_dk, test_dq
# Mistake: accumulates dK from Pᵀ instead of dSᵀ: dV is right, so test_dv keeps its points and only test_dk
# (and the autograd case of test_dq) lose theirs; this is what staging the backward shows.
# 错误：dK 用 Pᵀ 而不是 dSᵀ 累加：dV 正确，所以 test_dv 仍得分，只有 test_dk（和 test_dq 中经 autograd 的用例）
# 失分；分阶段评分正是为了显示这一点。
@@ -42 +42 @@
-        dk += tl.dot(dst.to(q.dtype), q)
+        dk += tl.dot(pt.to(q.dtype), q)
