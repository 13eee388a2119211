# selftest-notebook: online_softmax.ipynb
# selftest-replaces: os_merge_attention
# selftest-must-fail: test_merge_attention
# Mistake: returns the normalised output o / l instead of the unnormalised one the spec asks for.
# 错误：返回归一化后的 o / l，而规格要求未归一化的输出。
@@ -1,6 +1,5 @@
 def merge_attention_states(o1, m1, l1, o2, m2, l2):
-    """(o, m, ℓ) of the union of two parts; o1, o2 and o unnormalised (Σ e^(s-m) v), shape (..., d)."""
     m, l = merge_softmax_states(m1, l1, m2, l2)
     shift = finite_max(m)
     o = o1 * torch.exp(m1 - shift)[..., None] + o2 * torch.exp(m2 - shift)[..., None]
-    return o, m, l
+    return o / torch.where(l > 0, l, torch.ones_like(l))[..., None], m, l
