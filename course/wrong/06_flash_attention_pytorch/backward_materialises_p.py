# selftest-replaces: fa_backward
# selftest-must-fail: test_backward, test_autograd_function
# selftest-whole: one whole-matrix backward instead of tiles
# Mistake: correct values, but rebuilds the whole Nq x Nk matrix P at once.
# 错误：数值正确，但一次性重建了完整的 Nq×Nk 矩阵 P。
def flash_backward(Q, K, V, out, L, dO, is_causal=False):
    Qf, Kf, Vf, dOf = Q.float(), K.float(), V.float(), dO.float()
    scale = Q.shape[-1] ** -0.5
    p = torch.exp(score_tile(Qf, Kf, 0, 0, scale, is_causal) - L[..., None])
    dV = p.transpose(-2, -1) @ dOf
    dp = dOf @ Vf.transpose(-2, -1)
    ds = p * (dp - (dOf * out.float()).sum(-1, keepdim=True))
    dQ = ds @ Kf * scale
    dK = ds.transpose(-2, -1) @ Qf * scale
    return dQ.to(Q.dtype), dK.to(K.dtype), dV.to(V.dtype)
