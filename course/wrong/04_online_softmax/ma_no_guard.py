# selftest-replaces: os_merge_attention
# selftest-must-fail: test_merge_attention
# Mistake: rescales the outputs by e^(m1 - m) with m itself: NaN in o when both states are empty.
# 错误：用 m 本身算 e^(m1 - m) 来缩放输出：两个状态都为空时 o 是 NaN。
@@ -2,5 +2,5 @@
     """(o, m, ℓ) of the union of two parts; o1, o2 and o unnormalised (Σ e^(s-m) v), shape (..., d)."""
     m, l = merge_softmax_states(m1, l1, m2, l2)
-    shift = finite_max(m)
+    shift = m
     o = o1 * torch.exp(m1 - shift)[..., None] + o2 * torch.exp(m2 - shift)[..., None]
     return o, m, l
