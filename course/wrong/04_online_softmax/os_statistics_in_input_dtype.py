# selftest-replaces: os_online_softmax
# selftest-must-fail: test_online_softmax
# Mistake: keeps m and the running sum in the input's dtype (float16/bfloat16 sums stop growing on long rows).
# 错误：m 和运行和用输入的 dtype（长行上 float16/bfloat16 的和加不上去）。
@@ -4 +4 @@
-    work = torch.promote_types(x.dtype, torch.float32)
+    work = x.dtype
