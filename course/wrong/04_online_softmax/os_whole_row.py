# selftest-replaces: os_online_softmax
# selftest-must-fail: test_online_softmax
# selftest-whole: one torch.softmax per row instead of blocks
# Mistake: reads each whole row at once and calls torch.softmax (one read, no blocks: the row must fit on chip).
# 错误：一次读入整行再调用 torch.softmax（只读一次、不分块：整行必须放得进片上）。
def online_softmax(x, block_size):
    row = x[...].to(torch.promote_types(x.dtype, torch.float32))
    return torch.softmax(row, dim=-1).nan_to_num(0.0).to(x.dtype)
