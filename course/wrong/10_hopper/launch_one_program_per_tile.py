# selftest-replaces: hopper_launch
# selftest-must-fail: test_hopper
# Mistake: launches one program per tile (correct, but not a persistent grid).
# 错误：每个分块启动一个程序（结果正确，但不是持久网格）。
@@ -27 +27 @@
-    programs = min(utils.hopper.num_sms(), batch * triton.cdiv(n_q, block_q))
+    programs = batch * triton.cdiv(n_q, block_q)
