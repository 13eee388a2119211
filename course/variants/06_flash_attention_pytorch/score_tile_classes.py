# selftest-replaces: fa_score_tile
# Variant: classifies the tile first (fully visible / fully hidden / cut by the diagonal). / 变体：先判断分块类型（全可见 / 全遮住 / 被对角线穿过）。
@@ -8,6 +8,11 @@
-    s = q_tile.to(compute) @ k_tile.to(compute).transpose(-2, -1) * scale
-    if is_causal:
-        rows = torch.arange(q0, q0 + q_tile.shape[-2], device=s.device)[:, None]
-        cols = torch.arange(k0, k0 + k_tile.shape[-2], device=s.device)[None, :]
-        s = s.masked_fill(cols > rows, float("-inf"))
-    return s
+    q_last = q0 + q_tile.shape[-2] - 1
+    k_last = k0 + k_tile.shape[-2] - 1
+    s = scale * (q_tile.to(compute) @ k_tile.to(compute).transpose(-1, -2))
+    if not is_causal or k_last <= q0:
+        return s  # every key is at or before every query: nothing to mask
+    if k0 > q_last:
+        return torch.full_like(s, -float("inf"))  # every key comes after every query
+    rows = torch.arange(q0, q_last + 1, device=s.device)
+    cols = torch.arange(k0, k_last + 1, device=s.device)
+    keep = cols[None, :] <= rows[:, None]
+    return s.where(keep, torch.tensor(-float("inf"), dtype=compute, device=s.device))
