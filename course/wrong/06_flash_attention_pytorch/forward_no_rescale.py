# selftest-replaces: fa_forward
# selftest-must-fail: test_forward, test_causal, test_autograd_function
# Mistake: does not rescale the running sum and accumulator when the running maximum changes.
# 错误：运行最大值变化时没有重新缩放运行和与累加器。
@@ -30,2 +30,2 @@
-            ell = alpha * ell + p.sum(dim=-1)
-            acc = alpha[..., None] * acc + p @ V[:, k0:k1].to(compute)
+            ell = ell + p.sum(dim=-1)
+            acc = acc + p @ V[:, k0:k1].to(compute)
