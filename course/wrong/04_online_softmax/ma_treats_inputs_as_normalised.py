# selftest-replaces: os_merge_attention
# selftest-must-fail: test_merge_attention
# Mistake: treats o1 and o2 as normalised outputs (weights them by l and divides by the new l).
# 错误：把 o1、o2 当成已归一化的输出（乘以 l 再除以新的 l）。
@@ -5 +5,2 @@
-    o = o1 * torch.exp(m1 - shift)[..., None] + o2 * torch.exp(m2 - shift)[..., None]
+    w1, w2 = l1 * torch.exp(m1 - shift), l2 * torch.exp(m2 - shift)
+    o = (o1 * w1[..., None] + o2 * w2[..., None]) / torch.where(l > 0, l, torch.ones_like(l))[..., None]
