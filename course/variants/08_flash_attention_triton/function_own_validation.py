# selftest-replaces: fa_function
# Variant: validates the inputs with its own checks (no check_qkv), each raising ValueError with its own message.
# / 变体：用自己的检查（不用 check_qkv）验证输入，每项都以自己的消息引发 ValueError。
@@ -1,3 +0,0 @@
-from utils.attention.validate import check_qkv
-
-
@@ -12,5 +9,8 @@
-        check_qkv(q, k, v, head_dims=(16, 32, 64, 128))
-        if q.dim() != 3 or q.dtype not in (torch.float16, torch.bfloat16, torch.float32):
-            raise ValueError(utils.bilingual(
-                f"需要 (B, N, d) 的 float16/bfloat16/float32 张量，得到 {tuple(q.shape)} {q.dtype}",
-                f"expected (B, N, d) float16/bfloat16/float32 tensors, got {tuple(q.shape)} {q.dtype}"))
+        if q.dim() != 3 or k.dim() != 3 or v.dim() != 3:
+            raise ValueError(utils.bilingual("Q、K、V 必须是 (B, N, d)", "Q, K, V must be (B, N, d)"))
+        if q.dtype not in (torch.float16, torch.bfloat16, torch.float32) or not q.dtype == k.dtype == v.dtype:
+            raise ValueError(utils.bilingual(f"不支持的数据类型 {q.dtype}", f"unsupported dtype {q.dtype}"))
+        if k.shape != v.shape or q.shape[0] != k.shape[0] or q.shape[2] != k.shape[2]:
+            raise ValueError(utils.bilingual("Q、K、V 形状不匹配", "Q, K, V shapes do not match"))
+        if q.shape[2] not in (16, 32, 64, 128):
+            raise ValueError(utils.bilingual(f"不支持 d = {q.shape[2]}", f"d = {q.shape[2]} is not supported"))
