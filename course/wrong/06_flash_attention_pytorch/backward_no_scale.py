# selftest-replaces: fa_backward
# selftest-must-fail: test_backward, test_causal, test_autograd_function
# Mistake: forgets the chain-rule factor 1/sqrt(d) in dQ and dK.
# 错误：dQ 和 dK 中漏掉了链式法则带来的因子 1/√d。
@@ -28,2 +28,2 @@
-            dQ[:, q0:q1] += ds @ k * scale
-            dK[:, k0:k1] += ds.transpose(-2, -1) @ q * scale
+            dQ[:, q0:q1] += ds @ k
+            dK[:, k0:k1] += ds.transpose(-2, -1) @ q
