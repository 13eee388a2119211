# selftest-notebook: io_aware.ipynb
# selftest-replaces: fused_softmax
# selftest-must-fail: test_fused_softmax
# Mistake: the causal mask compares key positions with row numbers inside the block (forgets the block's offset r0).
# 错误：因果掩码用块内的行号和键的位置比较（忘了块的起点 r0）。
BLOCK_ROWS = 32  # rows of scores on chip at a time: your choice, at most 64


def fused_scale_mask_softmax(mem, scale, is_causal):
    """P = softmax(mask(scale · S)) row block by row block: S read at most once, P written once."""
    batch, n_q, n_k = mem["S"].shape
    compute = torch.promote_types(mem["S"].dtype, torch.float32)
    cols = torch.arange(n_k, device=mem["S"].device)
    for b in range(batch):
        for r0 in range(0, n_q, BLOCK_ROWS):
            r1 = min(r0 + BLOCK_ROWS, n_q)
            s = mem["S"][b, r0:r1].to(compute) * scale
            if is_causal:
                rows = torch.arange(r1 - r0, device=s.device)[:, None]
                s = s.masked_fill(cols[None, :] > rows, float("-inf"))
            mem["P"][b, r0:r1] = torch.softmax(s, dim=-1)
