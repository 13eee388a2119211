# selftest-notebook: io_aware.ipynb
# selftest-replaces: io_hbm_bytes
# selftest-must-fail: test_hbm_flash
# Mistake: forgets that the forward pass also writes L (one float32 per row).
# 错误：忘了前向传播还要写出 L（每行一个 float32）。
def hbm_bytes_standard(n, d, dtype, block_q=64):
    """HBM bytes of the three unfused kernels (one head, forward)."""
    e = dtype.itemsize
    return e * (2 * n * d + 2 * n * d * math.ceil(n / block_q) + 4 * n * n)


def hbm_bytes_flash(n, d, sram_bytes, dtype):
    """HBM bytes of the FlashAttention forward pass with the tiling rule (one head)."""
    e = dtype.itemsize
    fit = sram_bytes // (4 * d * e)
    if fit < 16:
        raise ValueError(utils.bilingual("SRAM 放不下 16 行的分块", "the SRAM cannot hold tiles of 16 rows"))
    block = 2 ** (fit.bit_length() - 1)
    return e * (2 * n * d + 2 * n * d * math.ceil(n / block))
