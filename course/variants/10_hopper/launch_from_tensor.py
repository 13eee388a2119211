# selftest-replaces: hopper_launch
# Variant: descriptors built with TensorDescriptor.from_tensor.
# 变体：用 TensorDescriptor.from_tensor 建描述符。
@@ -23,5 +23,5 @@

     def descriptor(t, rows):
-        return TensorDescriptor(t, list(t.shape), list(t.stride()), [1, rows, d])
+        return TensorDescriptor.from_tensor(t, [1, rows, d])

     programs = min(utils.hopper.num_sms(), batch * triton.cdiv(n_q, block_q))
