# selftest-replaces: hopper_launch
# selftest-must-fail: test_hopper
# Mistake: launches one program per tile (correct, but not a persistent grid).
# 错误：每个分块启动一个程序（结果正确，但不是持久网格）。
@@ -25,5 +25,5 @@
         return TensorDescriptor(t, list(t.shape), list(t.stride()), [1, rows, d])

-    programs = min(utils.hopper.num_sms(), batch * triton.cdiv(n_q, block_q))
+    programs = batch * triton.cdiv(n_q, block_q)
     hopper_fwd_kernel[(programs,)](
         descriptor(q, block_q), descriptor(k, block_k), descriptor(v, block_k), descriptor(out, block_q),
