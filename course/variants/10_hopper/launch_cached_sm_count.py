# selftest-replaces: hopper_launch
# Variant: the SM count read once, at definition time.
# 变体：SM 数只在定义时读一次。
@@ -2,4 +2,7 @@

 LOG2E = 1.4426950408889634
+
+
+NUM_SMS = utils.hopper.num_sms()  # read once: it does not change during a run


@@ -25,5 +28,5 @@
         return TensorDescriptor(t, list(t.shape), list(t.stride()), [1, rows, d])

-    programs = min(utils.hopper.num_sms(), batch * triton.cdiv(n_q, block_q))
+    programs = min(NUM_SMS, batch * triton.cdiv(n_q, block_q))
     hopper_fwd_kernel[(programs,)](
         descriptor(q, block_q), descriptor(k, block_k), descriptor(v, block_k), descriptor(out, block_q),
