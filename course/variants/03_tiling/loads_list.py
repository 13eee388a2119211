# selftest-replaces: tl_loads
# Variant: returns a list built with math.ceil of float division. / 变体：返回列表。
def matmul_hbm_loads(m, n, k, block_m, block_n, block_k):
    column_tiles = int(math.ceil(n / block_n))
    row_tiles = int(math.ceil(m / block_m))
    return [m * k * column_tiles, k * n * row_tiles]
