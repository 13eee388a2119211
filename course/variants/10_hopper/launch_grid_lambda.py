# selftest-replaces: hopper_launch
# Variant: the grid as a function of the launch's meta-parameters.
# 变体：网格写成启动参数的函数。
@@ -27,2 +27 @@
-    programs = min(utils.hopper.num_sms(), batch * triton.cdiv(n_q, block_q))
-    hopper_fwd_kernel[(programs,)](
+    hopper_fwd_kernel[lambda meta: (min(utils.hopper.num_sms(), batch * triton.cdiv(n_q, meta["BLOCK_Q"])),)](
