# selftest-replaces: fa_backward_dq
# selftest-must-fail: test_dq
# Mistake: launch_dq starts Nq // block programs: the last partial query tile gets no dQ.
# 错误：launch_dq 的程序数用了整除 Nq // block：最后一个不满的查询分块没有 dQ。
@@ -52 +52 @@
-    flash_bwd_dq_kernel[(triton.cdiv(n_q, block), batch)](
+    flash_bwd_dq_kernel[(n_q // block, batch)](
