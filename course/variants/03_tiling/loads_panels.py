# selftest-replaces: tl_loads
# Variant: each C tile reads its row panel of A and column panel of B. / 变体：每个 C 块读它的 A 行面板与 B 列面板。
def matmul_hbm_loads(m, n, k, block_m, block_n, block_k):
    a_loads = sum(min(block_m, m - i) * k for i in range(0, m, block_m)) * math.ceil(n / block_n)
    b_loads = sum(k * min(block_n, n - j) for j in range(0, n, block_n)) * math.ceil(m / block_m)
    return (a_loads, b_loads)
