# selftest-replaces: fa_function
# selftest-must-fail: test_forward, test_dq
# Mistake: launches Nq // block query programs: the tail rows (and every row when Nq < block) are never computed.
# 错误：查询程序数用了整除 Nq // block：尾部的查询行（Nq < block 时所有行）都没有计算。
@@ -22 +22 @@
-        flash_fwd_kernel[(triton.cdiv(n_q, block), batch)](
+        flash_fwd_kernel[(n_q // block, batch)](
