# selftest-replaces: os_weighted_sum
# selftest-must-fail: test_weighted_sum
# Mistake: keeps m, l and the output accumulator in the inputs' dtype (float16/bfloat16 on long rows).
# 错误：m、l 和输出累加器用输入的 dtype（长行上的 float16/bfloat16）。
@@ -4 +4 @@
-    work = torch.promote_types(torch.promote_types(scores.dtype, values.dtype), torch.float32)
+    work = values.dtype
