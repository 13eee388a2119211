# selftest-replaces: rc_backward_lse
# selftest-must-fail: test_backward_lse
# Mistake: ignores the saved L and recomputes P with a fresh softmax (a full row max and sum: what FlashAttention's
# tiles cannot do), so it answers for a different L than the one given.
# 错误：不用保存的 L，而是重新做一次 softmax（需要整行的最大值与和，FlashAttention 的分块做不到），答的不是给定 L 的梯度。
@@ -11 +11 @@
-    p = torch.exp(s - L.to(compute)[..., None])
+    p = torch.softmax(s, dim=-1)
