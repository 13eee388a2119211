# selftest-replaces: ai_roofline
# selftest-must-fail: test_roofline
# selftest-selfcheck-fails: test_roofline
# Mistake: attainable = intensity × bandwidth without the compute roof (a compute-bound op "exceeds" the peak).
# 错误：可达速度 = 强度 × 带宽，没有计算的屋顶（受计算限制的操作"超过"了峰值）。
@@ -5 +5 @@
-    return min(peak_flops, intensity * peak_bandwidth), bound
+    return intensity * peak_bandwidth, bound
