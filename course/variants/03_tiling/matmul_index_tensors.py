# selftest-replaces: tl_matmul
# Variant: tiles read and written through index tensors (advanced indexing). / 变体：用索引张量读写块。
def tiled_matmul(mem, block_m, block_n, block_k):
    m, k = mem["A"].shape
    n = mem["B"].shape[1]
    for i in range(0, m, block_m):
        rows = torch.arange(i, min(i + block_m, m))
        for j in range(0, n, block_n):
            cols = torch.arange(j, min(j + block_n, n))
            acc = torch.zeros(len(rows), len(cols))
            for p in range(0, k, block_k):
                inner = torch.arange(p, min(p + block_k, k))
                acc += mem["A"][rows[:, None], inner[None, :]].float() @ mem["B"][inner[:, None], cols[None, :]].float()
            mem["C"][rows[:, None], cols[None, :]] = acc
