# selftest-replaces: ai_roofline
# selftest-must-fail: test_roofline
# selftest-selfcheck-fails: test_roofline
# Mistake: calls an operation exactly at the ridge "memory"-bound (<= instead of <).
# 错误：恰好在拐点上的操作被判为受内存限制（用了 <= 而不是 <）。
@@ -4 +4 @@
-    bound = "memory" if intensity < peak_flops / peak_bandwidth else "compute"
+    bound = "memory" if intensity <= peak_flops / peak_bandwidth else "compute"
