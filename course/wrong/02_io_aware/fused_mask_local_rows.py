# selftest-replaces: fused_softmax
# selftest-must-fail: test_fused_softmax
# Mistake: the causal mask compares key positions with row numbers inside the block (forgets the block's offset r0).
# 错误：因果掩码用块内的行号和键的位置比较（忘了块的起点 r0）。
@@ -14 +14 @@
-                rows = torch.arange(r0, r1, device=s.device)[:, None]
+                rows = torch.arange(r1 - r0, device=s.device)[:, None]
