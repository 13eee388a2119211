# selftest-replaces: fused_softmax
# Variant: one row at a time (the smallest fast memory), logsumexp form. / 变体：一次一行，用 logsumexp 形式。
def fused_scale_mask_softmax(mem, scale, is_causal):
    batch, n_q, n_k = mem["S"].shape
    for b in range(batch):
        for i in range(n_q):
            row = mem["S"][b, i].to(torch.float32) * scale
            if is_causal and i + 1 < n_k:
                row[i + 1 :] = float("-inf")
            mem["P"][b, i] = torch.exp(row - torch.logsumexp(row, dim=0))
