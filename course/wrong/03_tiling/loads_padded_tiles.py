# selftest-replaces: tl_loads
# selftest-must-fail: test_matmul_loads
# selftest-whole: a one-line formula: the patch is longer than the cell
# Mistake: counts every tile as a full block_m×block_k (block_k×block_n) tile, including the masked-off part of remainder tiles.
# 错误：把每个块都按完整大小计数，余数块中被掩码的部分也算了进去。
def matmul_hbm_loads(m, n, k, block_m, block_n, block_k):
    tiles_m, tiles_n, tiles_k = math.ceil(m / block_m), math.ceil(n / block_n), math.ceil(k / block_k)
    per_c_tile_a, per_c_tile_b = tiles_k * block_m * block_k, tiles_k * block_k * block_n
    return tiles_m * tiles_n * per_c_tile_a, tiles_m * tiles_n * per_c_tile_b
