# selftest-replaces: io_hbm_bytes
# Variant: the tile from floor(log2(...)) and the tail through math.ceil of a fraction. / 变体：用 floor(log2(...)) 求块大小。
def hbm_bytes_standard(n, d, dtype, block_q=64):
    e = torch.tensor([], dtype=dtype).element_size()
    query_tiles = math.ceil(n / block_q)
    q_and_o = 2 * n * d
    k_and_v = 2 * n * d * query_tiles
    s_and_p = 2 * 2 * n * n  # each written once and read once
    return e * (q_and_o + k_and_v + s_and_p)


def hbm_bytes_flash(n, d, sram_bytes, dtype):
    e = torch.tensor([], dtype=dtype).element_size()
    rows = sram_bytes // (4 * d * e)
    if rows < 16:
        raise ValueError(utils.bilingual(f"SRAM {sram_bytes} B 太小", f"SRAM of {sram_bytes} B is too small"))
    block = 2 ** math.floor(math.log2(rows))
    return e * 2 * n * d * (1 + math.ceil(n / block)) + 4 * n
