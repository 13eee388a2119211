# selftest-replaces: fused_softmax
# selftest-must-fail: test_fused_softmax
# Mistake: the causal mask compares key positions with row numbers inside the block (forgets the block's offset r0).
# 错误：因果掩码用块内的行号和键的位置比较（忘了块的起点 r0）。
@@ -12,5 +12,5 @@
             s = mem["S"][b, r0:r1].to(compute) * scale
             if is_causal:
-                rows = torch.arange(r0, r1, device=s.device)[:, None]
+                rows = torch.arange(r1 - r0, device=s.device)[:, None]
                 s = s.masked_fill(cols[None, :] > rows, float("-inf"))
             mem["P"][b, r0:r1] = torch.softmax(s, dim=-1)
