# selftest-replaces: ai_roofline
# selftest-must-fail: test_roofline
# Mistake: takes the larger of the two ceilings instead of the smaller one.
# 错误：取两条天花板中较大的一个，而不是较小的。
@@ -5 +5 @@
-    return min(peak_flops, intensity * peak_bandwidth), bound
+    return max(peak_flops, intensity * peak_bandwidth), bound
