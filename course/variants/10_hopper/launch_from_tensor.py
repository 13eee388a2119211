# selftest-replaces: hopper_launch
# Variant: descriptors built with TensorDescriptor.from_tensor.
# 变体：用 TensorDescriptor.from_tensor 建描述符。
@@ -25 +25 @@
-        return TensorDescriptor(t, list(t.shape), list(t.stride()), [1, rows, d])
+        return TensorDescriptor.from_tensor(t, [1, rows, d])
