# selftest-notebook: online_softmax.ipynb
# selftest-replaces: os_online_softmax
# selftest-must-fail: test_online_softmax
# Mistake: keeps m and the running sum in the input's dtype (float16/bfloat16 sums stop growing on long rows).
# 错误：m 和运行和用输入的 dtype（长行上 float16/bfloat16 的和加不上去）。
@@ -1,10 +1,8 @@
 def online_softmax(x, block_size):
-    """softmax(x) over the last dim: one sweep over column blocks for (m, ℓ), one sweep to normalise."""
     n = x.shape[-1]
-    work = torch.promote_types(x.dtype, torch.float32)
-    m = torch.full(x.shape[:-1], float("-inf"), dtype=work, device=x.device)
-    row_sum = torch.zeros(x.shape[:-1], dtype=work, device=x.device)
+    m = torch.full(x.shape[:-1], float("-inf"), dtype=x.dtype, device=x.device)
+    row_sum = torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
     for c0 in range(0, n, block_size):
-        block = x[..., c0 : c0 + block_size].to(work)
+        block = x[..., c0 : c0 + block_size]
         m_new = torch.maximum(m, block.amax(dim=-1))
         shift = finite_max(m_new)
@@ -14,5 +12,4 @@
     out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
     for c0 in range(0, n, block_size):
-        block = x[..., c0 : c0 + block_size].to(work)
-        out[..., c0 : c0 + block_size] = (torch.exp(block - shift[..., None]) * inverse[..., None]).to(x.dtype)
+        out[..., c0 : c0 + block_size] = torch.exp(x[..., c0 : c0 + block_size] - shift[..., None]) * inverse[..., None]
     return out
