# selftest-replaces: os_weighted_sum
# selftest-must-fail: test_weighted_sum
# Mistake: rescales the running sum but not the output accumulator when the maximum grows.
# 错误：最大值变大时只重新缩放了运行和，没有缩放输出累加器。
@@ -17 +17 @@
-        acc = acc * rescale[..., None] + p @ v
+        acc = acc + p @ v
