# selftest-replaces: ai_roofline
# selftest-must-fail: test_roofline
# selftest-selfcheck-fails: test_roofline
# Mistake: computes the intensity as bytes per FLOP (upside down).
# 错误：把强度算成每 FLOP 多少字节（颠倒了）。
@@ -1,5 +1,5 @@
 def roofline(flops, nbytes, peak_flops, peak_bandwidth):
     """(attainable FLOP/s, "memory" or "compute") of an operation under the roofline model."""
-    intensity = flops / nbytes
+    intensity = nbytes / flops
     bound = "memory" if intensity < peak_flops / peak_bandwidth else "compute"
     return min(peak_flops, intensity * peak_bandwidth), bound
