# selftest-replaces: rc_backward_lse
# selftest-must-fail: test_backward_lse
# selftest-selfcheck-fails: test_backward_lse
# Mistake: always computes in float32 and converts back to the inputs' dtype: float64 inputs get only float32
# precision (the spec keeps float64 in float64).
# 错误：一律用 float32 计算、再转回输入的类型：float64 输入只得到 float32 的精度（规格要
# 求 float64 保持 float64）。
@@ -3 +3 @@
-    compute = torch.promote_types(Q.dtype, torch.float32)
+    compute = torch.float32
