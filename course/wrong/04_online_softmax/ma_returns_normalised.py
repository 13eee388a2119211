# selftest-replaces: os_merge_attention
# selftest-must-fail: test_merge_attention
# Mistake: returns the normalised output o / l instead of the unnormalised one the spec asks for.
# 错误：返回归一化后的 o / l，而规格要求未归一化的输出。
@@ -6 +6 @@
-    return o, m, l
+    return o / torch.where(l > 0, l, torch.ones_like(l))[..., None], m, l
