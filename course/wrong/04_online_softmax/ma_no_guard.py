# selftest-replaces: os_merge_attention
# selftest-must-fail: test_merge_attention
# Mistake: rescales the outputs by e^(m1 - m) with m itself: NaN in o when both states are empty.
# 错误：用 m 本身算 e^(m1 - m) 来缩放输出：两个状态都为空时 o 是 NaN。
@@ -4 +4 @@
-    shift = finite_max(m)
+    shift = m
