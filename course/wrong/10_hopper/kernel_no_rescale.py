# selftest-replaces: hopper_kernel
# selftest-must-fail: test_hopper
# Mistake: forgets to rescale the accumulator when the running maximum grows.
# 错误：运行最大值变大时忘了重新缩放累加器。
@@ -16,5 +16,5 @@
     correction = tl.exp2(row_max - new_max)
     row_sum = row_sum * correction + tl.sum(p, 1)
-    acc = tl.dot(p.to(v.dtype), v, acc * correction[:, None])
+    acc = tl.dot(p.to(v.dtype), v, acc)
     return acc, new_max, row_sum

