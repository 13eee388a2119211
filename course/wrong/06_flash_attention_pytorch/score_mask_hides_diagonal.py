# selftest-replaces: fa_score_tile
# selftest-must-fail: test_score_tile, test_causal, test_autograd_function
# Mistake: off-by-one causal mask: also masks j == i, so the first query sees no key (NaN).
# 错误：因果掩码差一：把 j == i 也遮住，第一个查询看不到任何键（NaN）。
@@ -10,4 +10,4 @@
         rows = torch.arange(q0, q0 + q_tile.shape[-2], device=s.device)[:, None]
         cols = torch.arange(k0, k0 + k_tile.shape[-2], device=s.device)[None, :]
-        s = s.masked_fill(cols > rows, float("-inf"))
+        s = s.masked_fill(cols >= rows, float("-inf"))
     return s
