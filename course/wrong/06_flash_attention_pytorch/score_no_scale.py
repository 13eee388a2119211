# selftest-replaces: fa_score_tile
# selftest-must-fail: test_score_tile, test_forward, test_backward, test_causal, test_autograd_function
# Mistake: forgets the softmax scale 1/sqrt(d).
# 错误：忘记 softmax 缩放因子 1/√d。
@@ -8 +8 @@
-    s = q_tile.to(compute) @ k_tile.to(compute).transpose(-2, -1) * scale
+    s = q_tile.to(compute) @ k_tile.to(compute).transpose(-2, -1)
