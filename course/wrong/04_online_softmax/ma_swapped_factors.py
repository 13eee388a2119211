# selftest-replaces: os_merge_attention
# selftest-must-fail: test_merge_attention
# Mistake: multiplies each output by the other state's factor (e^(m2 - m) on o1, e^(m1 - m) on o2).
# 错误：每个输出乘了另一个状态的因子（o1 乘 e^(m2 - m)，o2 乘 e^(m1 - m)）。
@@ -5 +5 @@
-    o = o1 * torch.exp(m1 - shift)[..., None] + o2 * torch.exp(m2 - shift)[..., None]
+    o = o1 * torch.exp(m2 - shift)[..., None] + o2 * torch.exp(m1 - shift)[..., None]
