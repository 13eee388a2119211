# selftest-replaces: tl_matmul
# selftest-must-fail: test_tiled_matmul
# selftest-selfcheck-fails: test_tiled_matmul
# selftest-whole: reorders the loops around a panel of B
# Mistake: keeps a whole k×block_n panel of B in fast memory and reuses it for every row tile: fewer loads than the formula, but far more than one tile on chip.
# 错误：把 B 的整条 k×block_n 列面板放在快速内存中给所有行块复用：读得比公式少，但片上远不止一个块。
def tiled_matmul(mem, block_m, block_n, block_k):
    (m, k), n = mem["A"].shape, mem["B"].shape[1]
    for j in range(0, n, block_n):
        panel = mem["B"][:, j : j + block_n].float()
        for i in range(0, m, block_m):
            acc = torch.zeros(min(block_m, m - i), panel.shape[1])
            for p in range(0, k, block_k):
                acc += mem["A"][i : i + block_m, p : p + block_k].float() @ panel[p : p + block_k]
            mem["C"][i : i + block_m, j : j + block_n] = acc
