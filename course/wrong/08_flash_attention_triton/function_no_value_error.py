# selftest-replaces: fa_function
# selftest-must-fail: test_forward
# selftest-selfcheck-fails: test_forward
# Mistake: validates nothing: a float64, 4-D or mismatched input runs the kernel (or fails with some other
# error) instead of raising ValueError.
# 错误：不做任何输入检查：float64、4 维或形状不匹配的输入直接启动内核（或抛出别的错误），而不是 ValueError。
@@ -1,3 +0,0 @@
-from utils.attention.validate import check_qkv
-
-
@@ -12,5 +8,0 @@
-        check_qkv(q, k, v, head_dims=(16, 32, 64, 128))
-        if q.dim() != 3 or q.dtype not in (torch.float16, torch.bfloat16, torch.float32):
-            raise ValueError(utils.bilingual(
-                f"需要 (B, N, d) 的 float16/bfloat16/float32 张量，得到 {tuple(q.shape)} {q.dtype}",
-                f"expected (B, N, d) float16/bfloat16/float32 tensors, got {tuple(q.shape)} {q.dtype}"))
