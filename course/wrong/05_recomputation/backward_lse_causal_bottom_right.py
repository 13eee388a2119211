# selftest-notebook: recomputation.ipynb
# selftest-replaces: rc_backward_lse
# selftest-must-fail: test_backward_lse_causal
# selftest-whole: a different program, not the reference with a change
# Mistake: aligns the causal mask bottom-right (query i sees keys j ≤ i + Nk − Nq), the convention of some
# libraries, not the course's top-left one: right for Nq = Nk only.
# 错误：因果掩码右下角对齐（查询 i 看键 j ≤ i + Nk − Nq），这是某些库的约定，不是本课程的左上角对齐：只在 Nq = Nk 时正确。
def attention_backward_from_lse(Q, K, V, out, L, dO, is_causal=False):
    compute = torch.promote_types(Q.dtype, torch.float32)
    q, k, v, o, d_out = (t.to(compute) for t in (Q, K, V, out, dO))
    scale = Q.shape[-1] ** -0.5
    s = scale * q @ k.transpose(-2, -1)
    if is_causal:
        n_q, n_k = Q.shape[-2], K.shape[-2]
        rows = torch.arange(n_q, device=Q.device)[:, None] + (n_k - n_q)
        cols = torch.arange(n_k, device=Q.device)[None, :]
        s = s.masked_fill(cols > rows, float("-inf"))
    p = torch.exp(s - L.to(compute)[..., None])
    delta = (d_out * o).sum(dim=-1, keepdim=True)
    d_s = p * (d_out @ v.transpose(-2, -1) - delta)
    return (
        (scale * d_s @ k).to(Q.dtype),
        (scale * d_s.transpose(-2, -1) @ q).to(K.dtype),
        (p.transpose(-2, -1) @ d_out).to(V.dtype),
    )
