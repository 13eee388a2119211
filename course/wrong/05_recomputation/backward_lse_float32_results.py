# selftest-notebook: recomputation.ipynb
# selftest-replaces: rc_backward_lse
# selftest-must-fail: test_backward_lse, test_backward_lse_causal
# Mistake: computes everything in float32 and returns float32 gradients, whatever the inputs' dtype (bfloat16
# parameters would get float32 gradients; float64 inputs lose their precision).
# 错误：一律用 float32 计算并返回 float32 的梯度，不管输入是什么类型（bfloat16 参数会得到 float32 梯度，float64 输入丢了精度）。
@@ -1,6 +1,4 @@
 def attention_backward_from_lse(Q, K, V, out, L, dO, is_causal=False):
-    """dQ, dK, dV of softmax(σ Q Kᵀ) V, rebuilding P = exp(σ Q Kᵀ − L) and using Δ = rowsum(dO ∘ out)."""
-    compute = torch.promote_types(Q.dtype, torch.float32)
-    q, k, v, o, d_out = (t.to(compute) for t in (Q, K, V, out, dO))
+    q, k, v, o, d_out = (t.float() for t in (Q, K, V, out, dO))
     scale = Q.shape[-1] ** -0.5
     s = scale * q @ k.transpose(-2, -1)
@@ -9,9 +7,6 @@
         cols = torch.arange(K.shape[-2], device=Q.device)[None, :]
         s = s.masked_fill(cols > rows, float("-inf"))
-    p = torch.exp(s - L.to(compute)[..., None])
+    p = torch.exp(s - L.float()[..., None])
     delta = (d_out * o).sum(dim=-1, keepdim=True)
     d_s = p * (d_out @ v.transpose(-2, -1) - delta)
-    dQ = scale * d_s @ k
-    dK = scale * d_s.transpose(-2, -1) @ q
-    dV = p.transpose(-2, -1) @ d_out
-    return dQ.to(Q.dtype), dK.to(K.dtype), dV.to(V.dtype)
+    return scale * d_s @ k, scale * d_s.transpose(-2, -1) @ q, p.transpose(-2, -1) @ d_out
