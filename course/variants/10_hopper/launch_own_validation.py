# selftest-replaces: hopper_launch
# Variant: its own input checks instead of check_qkv.
# 变体：自己检查输入，不用 check_qkv。
@@ -14,4 +14,3 @@
-    check_qkv(q, k, v, head_dims=(64, 128))
-    if q.dim() != 3:
-        raise ValueError(utils.bilingual(f"需要 (B, N, d) 张量，得到 {tuple(q.shape)}",
-                                         f"expected (B, N, d) tensors, got {tuple(q.shape)}"))
+    if q.dim() != 3 or q.shape[-1] not in (64, 128) or k.shape != v.shape or q.shape[-1] != k.shape[-1]:
+        raise ValueError(utils.bilingual("需要 (B, N, d) 的 Q、K、V，d 为 64 或 128",
+                                         "expected (B, N, d) Q, K, V with d = 64 or 128"))
