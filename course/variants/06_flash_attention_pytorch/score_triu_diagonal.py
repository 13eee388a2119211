# selftest-replaces: fa_score_tile
# Variant: causal mask from torch.triu with the diagonal offset q0 - k0 + 1. / 变体：用 torch.triu 生成因果掩码，对角线偏移为 q0 - k0 + 1。
@@ -8 +8 @@
-    s = q_tile.to(compute) @ k_tile.to(compute).transpose(-2, -1) * scale
+    s = torch.matmul(q_tile.to(compute), k_tile.to(compute).transpose(1, 2)).mul_(scale)
@@ -10,3 +10,4 @@
-        rows = torch.arange(q0, q0 + q_tile.shape[-2], device=s.device)[:, None]
-        cols = torch.arange(k0, k0 + k_tile.shape[-2], device=s.device)[None, :]
-        s = s.masked_fill(cols > rows, float("-inf"))
+        bq, bk = s.shape[-2], s.shape[-1]
+        # k0 + c > q0 + r  <=>  c - r >= q0 - k0 + 1: the upper triangle starting at that diagonal
+        above = torch.ones(bq, bk, dtype=torch.bool, device=s.device).triu(diagonal=q0 - k0 + 1)
+        s.masked_fill_(above, -math.inf)
