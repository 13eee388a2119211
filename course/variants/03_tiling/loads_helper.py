# selftest-replaces: tl_loads
# Variant: a helper for the number of tiles, (a + b - 1) // b. / 变体：块数的辅助函数。
def tiles(size, block):
    return (size + block - 1) // block


def matmul_hbm_loads(m, n, k, block_m, block_n, block_k):
    a_elements, b_elements = m * k, k * n
    return a_elements * tiles(n, block_n), b_elements * tiles(m, block_m)
