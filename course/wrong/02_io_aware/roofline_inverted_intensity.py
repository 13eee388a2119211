# selftest-replaces: ai_roofline
# selftest-must-fail: test_roofline
# selftest-selfcheck-fails: test_roofline
# Mistake: computes the intensity as bytes per FLOP (upside down).
# 错误：把强度算成每 FLOP 多少字节（颠倒了）。
@@ -3 +3 @@
-    intensity = flops / nbytes
+    intensity = nbytes / flops
