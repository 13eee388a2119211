# selftest-replaces: fa_score_tile
# selftest-must-fail: test_score_tile, test_causal, test_autograd_function
# Mistake: builds the causal mask from positions inside the tile, ignoring q0 and k0.
# 错误：用块内的局部位置构造因果掩码，忽略了 q0 和 k0。
@@ -10,2 +10,2 @@
-        rows = torch.arange(q0, q0 + q_tile.shape[-2], device=s.device)[:, None]
-        cols = torch.arange(k0, k0 + k_tile.shape[-2], device=s.device)[None, :]
+        rows = torch.arange(q_tile.shape[-2], device=s.device)[:, None]
+        cols = torch.arange(k_tile.shape[-2], device=s.device)[None, :]
