# selftest-replaces: fa_forward
# selftest-must-fail: test_forward, test_causal, test_autograd_function
# Mistake: loops over N // B full tiles only (like the seed notebook), so the tail rows and keys are dropped.
# 错误：只遍历 N // B 个完整的块（和原始笔记一样），尾部的行和键被丢掉。
@@ -13,7 +13,7 @@
     scale = d**-0.5
     compute = torch.promote_types(Q.dtype, torch.float32)
-    out = torch.empty_like(Q)
-    L = torch.empty(batch, n_q, device=Q.device, dtype=torch.float32)
-    for q0 in range(0, n_q, BLOCK_Q):
+    out = torch.zeros_like(Q)
+    L = torch.zeros(batch, n_q, device=Q.device, dtype=torch.float32)
+    for q0 in range(0, n_q // BLOCK_Q * BLOCK_Q, BLOCK_Q):
         q1 = min(q0 + BLOCK_Q, n_q)
         q = Q[:, q0:q1]
@@ -22,5 +22,5 @@
         acc = torch.zeros(batch, q1 - q0, d, device=Q.device, dtype=compute)
         k_end = min(n_k, q1) if is_causal else n_k  # causal: later keys are all masked
-        for k0 in range(0, k_end, BLOCK_K):
+        for k0 in range(0, k_end // BLOCK_K * BLOCK_K, BLOCK_K):
             k1 = min(k0 + BLOCK_K, n_k)
             s = score_tile(q, K[:, k0:k1], q0, k0, scale, is_causal)
