# selftest-replaces: os_merge_states
# selftest-must-fail: test_merge_states
# Mistake: rescales only the first state's sum (correct only when m2 is the larger maximum).
# 错误：只重新缩放第一个状态的和（只有 m2 更大时才对）。
@@ -5 +5 @@
-    return m, l1 * torch.exp(m1 - shift) + l2 * torch.exp(m2 - shift)
+    return m, l1 * torch.exp(m1 - shift) + l2
