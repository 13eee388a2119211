# selftest-replaces: fa_function
# Variant: the backward makes dO contiguous first (autograd's gradient of out.sum() is a stride-0 broadcast)
# and computes Δ with torch.sum. / 变体：反向先把 dO 变为连续（autograd 对 out.sum() 的梯度是步长为 0 的广播），
# 用 torch.sum 计算 Δ。
@@ -32 +32,2 @@
-        delta = (grad_out.float() * o.float()).sum(-1)  # Δ = rowsum(dO ∘ O): float32, (B, Nq)
+        grad_out = grad_out.contiguous()
+        delta = torch.sum(grad_out.float() * o.float(), dim=-1)
