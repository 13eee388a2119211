# selftest-replaces: os_merge_states
# selftest-must-fail: test_merge_states
# Mistake: subtracts m itself: merging two empty states gives e^(-inf + inf) = NaN.
# 错误：直接减去 m：两个空状态合并得到 e^(-inf + inf) = NaN。
@@ -2,4 +2,4 @@
     """(m, ℓ) of the union of two parts of a row, from each part's (m, ℓ)."""
     m = torch.maximum(m1, m2)
-    shift = finite_max(m)
+    shift = m
     return m, l1 * torch.exp(m1 - shift) + l2 * torch.exp(m2 - shift)
