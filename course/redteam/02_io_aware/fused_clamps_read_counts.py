# selftest-replaces: fused_softmax
# selftest-caps: test_fused_softmax=2.25
# selftest-class: rewritten-counters
# selftest-on: fused_three_passes
# Attack: reads each block of S three times, then clamps the slow tensor's per-element read counts to 1.
# 攻击：每个 S 块读三遍，然后把慢速张量逐元素的读取计数截到 1。
@@ -1 +1 @@
-BLOCK_ROWS = 32  # rows of scores on chip at a time: your choice, at most 64
+BLOCK_ROWS = 32
@@ -5 +4,0 @@
-    """P = softmax(mask(scale · S)) row block by row block: S read at most once, P written once."""
@@ -8 +7 @@
-    cols = torch.arange(n_k, device=mem["S"].device)
+    cols = torch.arange(n_k)
@@ -13,2 +12 @@
-            rows = torch.arange(r0, r1, device=s.device)[:, None]
-            s = s.masked_fill(cols[None, :] > rows, float("-inf"))
+            s = s.masked_fill(cols[None, :] > torch.arange(r0, r1)[:, None], float("-inf"))
@@ -22 +20,2 @@
             mem["P"][b, r0:r1] = torch.exp(scores(b, r0, r1) - row_max) / row_sum
+    mem["S"]._reads.clamp_(max=1)
