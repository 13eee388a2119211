# selftest-replaces: hopper_launch
# Variant: the grid as a function of the launch's meta-parameters.
# 变体：网格写成启动参数的函数。
@@ -25,6 +25,5 @@
         return TensorDescriptor(t, list(t.shape), list(t.stride()), [1, rows, d])

-    programs = min(utils.hopper.num_sms(), batch * triton.cdiv(n_q, block_q))
-    hopper_fwd_kernel[(programs,)](
+    hopper_fwd_kernel[lambda meta: (min(utils.hopper.num_sms(), batch * triton.cdiv(n_q, meta["BLOCK_Q"])),)](
         descriptor(q, block_q), descriptor(k, block_k), descriptor(v, block_k), descriptor(out, block_q),
         n_q, n_k, batch, d**-0.5 * LOG2E,
