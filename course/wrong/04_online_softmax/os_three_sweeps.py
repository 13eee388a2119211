# selftest-replaces: os_online_softmax
# selftest-must-fail: test_online_softmax
# Mistake: the safe softmax in three sweeps over the blocks (the maximum, then the sum, then normalise).
# 错误：对各块扫三遍的安全 softmax（先求最大值，再求和，再归一化）。
@@ -5 +5,4 @@
     m = torch.full(x.shape[:-1], float("-inf"), dtype=work, device=x.device)
+    for c0 in range(0, n, block_size):
+        m = torch.maximum(m, x[..., c0 : c0 + block_size].to(work).amax(dim=-1))
+    shift = finite_max(m)
@@ -8,6 +11,2 @@
-        block = x[..., c0 : c0 + block_size].to(work)
-        m_new = torch.maximum(m, block.amax(dim=-1))
-        shift = finite_max(m_new)
-        row_sum = row_sum * torch.exp(m - shift) + torch.exp(block - shift[..., None]).sum(dim=-1)
-        m = m_new
-    shift, inverse = finite_max(m), torch.where(row_sum > 0, 1 / row_sum, torch.zeros_like(row_sum))
+        row_sum = row_sum + torch.exp(x[..., c0 : c0 + block_size].to(work) - shift[..., None]).sum(dim=-1)
+    inverse = torch.where(row_sum > 0, 1 / row_sum, torch.zeros_like(row_sum))
