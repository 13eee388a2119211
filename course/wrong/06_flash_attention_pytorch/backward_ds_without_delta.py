# selftest-notebook: flash_attention_pytorch.ipynb
# selftest-replaces: fa_backward
# selftest-must-fail: test_backward, test_causal, test_autograd_function
# Mistake: dS = P * dP: forgets the −Δ term of the softmax Jacobian.
# 错误：dS = P ∘ dP：漏掉了 softmax 雅可比矩阵的 −Δ 项。
def flash_backward(Q, K, V, out, L, dO, is_causal=False):
    """Tiled backward pass: rebuilds each tile of P from Q, K and L (recomputation).

    `out` is the forward output O and L its log-sum-exp (float32, (B, Nq)); dO is the upstream gradient.

    Returns dQ, dK, dV with the shapes and dtypes of Q, K, V. Never builds an Nq×Nk tensor.
    """
    n_q, d = Q.shape[-2:]
    n_k = K.shape[-2]
    scale = d**-0.5
    compute = torch.promote_types(Q.dtype, torch.float32)
    delta = (dO.to(compute) * out.to(compute)).sum(dim=-1)  # Δ_i = rowsum(dO ∘ O) = rowsum(P ∘ dP)
    dQ = torch.zeros(Q.shape, device=Q.device, dtype=compute)
    dK = torch.zeros(K.shape, device=K.device, dtype=compute)
    dV = torch.zeros(V.shape, device=V.device, dtype=compute)
    for k0 in range(0, n_k, BLOCK_K):
        k1 = min(k0 + BLOCK_K, n_k)
        k, v = K[:, k0:k1].to(compute), V[:, k0:k1].to(compute)
        for q0 in range(0, n_q, BLOCK_Q):
            q1 = min(q0 + BLOCK_Q, n_q)
            if is_causal and k0 > q1 - 1:
                continue  # every key in this tile comes after every query: all masked
            q, do = Q[:, q0:q1].to(compute), dO[:, q0:q1].to(compute)
            p = torch.exp(score_tile(q, k, q0, k0, scale, is_causal) - L[:, q0:q1, None])
            dV[:, k0:k1] += p.transpose(-2, -1) @ do
            dp = do @ v.transpose(-2, -1)
            ds = p * dp
            dQ[:, q0:q1] += ds @ k * scale
            dK[:, k0:k1] += ds.transpose(-2, -1) @ q * scale
    return dQ.to(Q.dtype), dK.to(K.dtype), dV.to(V.dtype)
