# selftest-replaces: rc_backward_lse
# selftest-must-fail: test_backward_lse
# Mistake: takes Δ = rowsum(P ∘ dP) instead of rowsum(dO ∘ O): equal only when O = P V exactly, and it needs whole
# rows of P and dP, which a tiled backward pass never has.
# 错误：用 Δ = rowsum(P ∘ dP) 代替 rowsum(dO ∘ O)：只在 O 恰好等于 P V 时相等，而且需要整行的 P 和 dP，分块的反向传播没有它们。
@@ -12 +12 @@
-    delta = (d_out * o).sum(dim=-1, keepdim=True)
+    delta = (p * (d_out @ v.transpose(-2, -1))).sum(dim=-1, keepdim=True)
