# selftest-replaces: fa_function
# selftest-must-fail: test_forward
# selftest-selfcheck-fails: test_forward
# Mistake: calls check_qkv without head_dims, so an unsupported head dimension (d = 48) reaches the kernel.
# 错误：调用 check_qkv 时没有传 head_dims，不受支持的头维度（d = 48）进入了内核。
@@ -12 +12 @@
-        check_qkv(q, k, v, head_dims=(16, 32, 64, 128))
+        check_qkv(q, k, v)
