# selftest-replaces: os_online_softmax
# selftest-must-fail: test_online_softmax
# selftest-selfcheck-fails: test_online_softmax
# Mistake: keeps m and ℓ in float32 whatever the input, so a float64 softmax is only as accurate as float32 (~1e-7).
# 错误：无论输入是什么都用 float32 的 m 和 ℓ，float64 的 softmax 只有 float32 的精度（约 1e-7）。
@@ -4 +4 @@
-    work = torch.promote_types(x.dtype, torch.float32)
+    work = torch.float32
