# selftest-notebook: io_aware.ipynb
# selftest-replaces: io_hbm_bytes
# selftest-must-fail: test_hbm_flash
# Mistake: uses B = M / (4·d·e) itself, not the largest power of two below it.
# 错误：直接用 B = M / (4·d·e)，而不是不超过它的最大的 2 的幂。
def hbm_bytes_standard(n, d, dtype, block_q=64):
    """HBM bytes of the three unfused kernels (one head, forward)."""
    e = dtype.itemsize
    return e * (2 * n * d + 2 * n * d * math.ceil(n / block_q) + 4 * n * n)


def hbm_bytes_flash(n, d, sram_bytes, dtype):
    """HBM bytes of the FlashAttention forward pass with the tiling rule (one head)."""
    e = dtype.itemsize
    block = sram_bytes // (4 * d * e)
    if block < 16:
        raise ValueError(utils.bilingual("SRAM 放不下 16 行的分块", "the SRAM cannot hold tiles of 16 rows"))
    return e * (2 * n * d + 2 * n * d * math.ceil(n / block)) + 4 * n
