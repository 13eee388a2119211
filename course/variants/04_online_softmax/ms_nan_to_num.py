# selftest-replaces: os_merge_states
# Variant: computes e^(m_i - m) as written and replaces the NaN of an empty side by 0 afterwards. / 变体：照公式算 e^(m_i - m)，再把空状态产生的 NaN 换成 0。
def merge_softmax_states(m1, l1, m2, l2):
    m = torch.max(m1, m2)
    return m, torch.nan_to_num(l1 * torch.exp(m1 - m), nan=0.0) + torch.nan_to_num(l2 * torch.exp(m2 - m), nan=0.0)
