# selftest-replaces: tl_loads
# Variant: adds up the true size of every tile each C tile loads. / 变体：逐块累加每个 C 块读入的真实块大小。
def matmul_hbm_loads(m, n, k, block_m, block_n, block_k):
    a_loads = b_loads = 0
    for i in range(0, m, block_m):
        for j in range(0, n, block_n):
            for p in range(0, k, block_k):
                kk = min(block_k, k - p)
                a_loads += min(block_m, m - i) * kk
                b_loads += kk * min(block_n, n - j)
    return a_loads, b_loads
