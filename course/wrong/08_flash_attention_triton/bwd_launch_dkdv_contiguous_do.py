# selftest-replaces: fa_backward_dkdv
# selftest-must-fail: test_dv, test_dk, test_dq
# Mistake: launch_dkdv passes the strides of a contiguous dO (Nq·d, d, 1) instead of grad_out.stride(): a
# transposed or stride-0 dO (autograd's gradient of out.sum() is one) is read wrong.
# 错误：launch_dkdv 传入的是连续 dO 的步长 (Nq·d, d, 1) 而不是 grad_out.stride()：转置或步长为 0 的 dO
# （autograd 对 out.sum() 的梯度就是）被读错。
@@ -58 +58 @@
-        *q.stride(), *k.stride(), *v.stride(), *grad_out.stride(), *lse.stride(), *delta.stride(),
+        *q.stride(), *k.stride(), *v.stride(), n_q * d, d, 1, *lse.stride(), *delta.stride(),
