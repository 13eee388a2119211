# selftest-replaces: fa_forward
# selftest-must-fail: test_forward, test_causal, test_autograd_function
# Mistake: loops over N // B full tiles only (like the seed notebook), so the tail rows and keys are dropped.
# 错误：只遍历 N // B 个完整的块（和原始笔记一样），尾部的行和键被丢掉。
@@ -15,3 +15,3 @@
-    out = torch.empty_like(Q)
-    L = torch.empty(batch, n_q, device=Q.device, dtype=torch.float32)
-    for q0 in range(0, n_q, BLOCK_Q):
+    out = torch.zeros_like(Q)
+    L = torch.zeros(batch, n_q, device=Q.device, dtype=torch.float32)
+    for q0 in range(0, n_q // BLOCK_Q * BLOCK_Q, BLOCK_Q):
@@ -24 +24 @@
-        for k0 in range(0, k_end, BLOCK_K):
+        for k0 in range(0, k_end // BLOCK_K * BLOCK_K, BLOCK_K):
