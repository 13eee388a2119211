# selftest-replaces: hopper_kernel
# selftest-must-fail: test_hopper
# Mistake: forgets to rescale the accumulator when the running maximum grows.
# 错误：运行最大值变大时忘了重新缩放累加器。
@@ -18 +18 @@
-    acc = tl.dot(p.to(v.dtype), v, acc * correction[:, None])
+    acc = tl.dot(p.to(v.dtype), v, acc)
