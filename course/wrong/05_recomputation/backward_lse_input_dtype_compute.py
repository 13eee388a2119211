# selftest-replaces: rc_backward_lse
# selftest-must-fail: test_backward_lse, test_backward_lse_causal
# selftest-selfcheck-fails: test_backward_lse, test_backward_lse_causal
# Mistake: computes in the inputs' dtype: with bfloat16 inputs S, P and dS are all rounded to bfloat16, several
# times the error of a float32 computation (the spec asks for at least float32).
# 错误：在输入的类型里计算：bfloat16 输入的 S、P、dS 都舍入到 bfloat16，误差比 float
# 32 计算大好几倍（规格要求至少用 float32 计算）。
@@ -3 +3 @@
-    compute = torch.promote_types(Q.dtype, torch.float32)
+    compute = Q.dtype
