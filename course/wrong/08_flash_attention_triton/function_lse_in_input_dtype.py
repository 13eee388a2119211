# selftest-replaces: fa_function
# selftest-must-fail: test_forward
# Mistake: allocates L in the input dtype instead of float32 (right for float32 inputs only).
# 错误：L 用了输入的数据类型而不是 float32（只有 float32 输入时才对）。
@@ -21 +21 @@
-        lse = torch.empty(batch, n_q, device=q.device, dtype=torch.float32)
+        lse = torch.empty(batch, n_q, device=q.device, dtype=q.dtype)
