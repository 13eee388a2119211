# selftest-notebook: online_softmax.ipynb
# selftest-replaces: os_merge_attention
# selftest-must-fail: test_merge_attention
# Mistake: multiplies each output by the other state's factor (e^(m2 - m) on o1, e^(m1 - m) on o2).
# 错误：每个输出乘了另一个状态的因子（o1 乘 e^(m2 - m)，o2 乘 e^(m1 - m)）。
@@ -1,6 +1,4 @@
 def merge_attention_states(o1, m1, l1, o2, m2, l2):
-    """(o, m, ℓ) of the union of two parts; o1, o2 and o unnormalised (Σ e^(s-m) v), shape (..., d)."""
     m, l = merge_softmax_states(m1, l1, m2, l2)
     shift = finite_max(m)
-    o = o1 * torch.exp(m1 - shift)[..., None] + o2 * torch.exp(m2 - shift)[..., None]
-    return o, m, l
+    return o1 * torch.exp(m2 - shift)[..., None] + o2 * torch.exp(m1 - shift)[..., None], m, l
