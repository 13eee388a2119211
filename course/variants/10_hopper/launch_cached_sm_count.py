# selftest-replaces: hopper_launch
# Variant: the SM count read once, at definition time.
# 变体：SM 数只在定义时读一次。
@@ -3 +3,4 @@
 LOG2E = 1.4426950408889634
+
+
+NUM_SMS = utils.hopper.num_sms()  # read once: it does not change during a run
@@ -27 +30 @@
-    programs = min(utils.hopper.num_sms(), batch * triton.cdiv(n_q, block_q))
+    programs = min(NUM_SMS, batch * triton.cdiv(n_q, block_q))
