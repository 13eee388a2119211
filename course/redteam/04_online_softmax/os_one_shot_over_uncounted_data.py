# selftest-replaces: os_online_softmax
# selftest-caps: test_online_softmax=4
# selftest-class: uncounted-traffic
# selftest-whole: one torch.softmax over the counted tensor's private _data, with two empty sweeps for the counter
# Attack: a one-shot softmax disguised as two sweeps: it reads every block twice for the counter and keeps nothing,
# then computes the softmax of whole rows read through the counted tensor's private _data, past the counter. Its
# honest score is the whole-row softmax's (course/wrong/04_online_softmax/os_whole_row.py).
# 攻击：伪装成两遍的一次性 softmax：为计数器把每块读两遍却什么都不留，再经由计数张量的私有 _data 绕过计数器
# 读整行求 softmax。它应得的分数与整行 softmax 相同。
def online_softmax(x, block_size):
    for _ in range(2):
        for c0 in range(0, x.shape[-1], block_size):
            x[..., c0 : c0 + block_size]
    row = x._data.to(torch.promote_types(x.dtype, torch.float32))
    return torch.softmax(row, dim=-1).nan_to_num(0.0).to(x.dtype)
