# selftest-replaces: ai_roofline
# selftest-must-fail: test_roofline
# selftest-selfcheck-fails: test_roofline
# Mistake: calls an operation exactly at the ridge "memory"-bound (<= instead of <).
# 错误：恰好在拐点上的操作被判为受内存限制（用了 <= 而不是 <）。
@@ -2,4 +2,4 @@
     """(attainable FLOP/s, "memory" or "compute") of an operation under the roofline model."""
     intensity = flops / nbytes
-    bound = "memory" if intensity < peak_flops / peak_bandwidth else "compute"
+    bound = "memory" if intensity <= peak_flops / peak_bandwidth else "compute"
     return min(peak_flops, intensity * peak_bandwidth), bound
