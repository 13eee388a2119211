# selftest-replaces: fa_score_tile
# selftest-must-fail: test_score_tile
# Mistake: computes the scores in the input dtype (bfloat16 stays bfloat16) instead of float32.
# 错误：在输入精度下计算分数（bfloat16 没有转成 float32）。
@@ -7,2 +7 @@
-    compute = torch.promote_types(q_tile.dtype, torch.float32)
-    s = q_tile.to(compute) @ k_tile.to(compute).transpose(-2, -1) * scale
+    s = q_tile @ k_tile.transpose(-2, -1) * scale
