# selftest-replaces: fa_forward_kernel
# selftest-must-fail: test_forward, test_dq
# Mistake: does not rescale the output accumulator by exp(m - m_new) when the running maximum grows.
# 错误：运行最大值变大时，输出累加器没有乘以 exp(m - m_new)。
@@ -42 +42 @@
-        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
+        acc = acc + tl.dot(p.to(v.dtype), v)
