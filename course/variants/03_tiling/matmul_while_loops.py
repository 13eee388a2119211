# selftest-replaces: tl_matmul
# Variant: while loops and an accumulator in float64 (more precise than required). / 变体：while 循环，float64 累加器。
def tiled_matmul(mem, block_m, block_n, block_k):
    m, k = mem["A"].shape
    n = mem["B"].shape[1]
    i = 0
    while i < m:
        j = 0
        while j < n:
            acc = torch.zeros(min(block_m, m - i), min(block_n, n - j), dtype=torch.float64)
            p = 0
            while p < k:
                acc += mem["A"][i : i + block_m, p : p + block_k].double() @ mem["B"][p : p + block_k, j : j + block_n].double()
                p += block_k
            mem["C"][i : i + block_m, j : j + block_n] = acc.to(mem["C"].dtype)
            j += block_n
        i += block_m
