# selftest-notebook: io_aware.ipynb
# selftest-replaces: io_hbm_bytes
# selftest-must-fail: test_hbm_standard
# Mistake: counts S and P as float32 whatever the inputs' dtype (the kernels store them in the inputs' dtype).
# 错误：不管输入的 dtype，都把 S 和 P 按 float32 计（内核按输入的 dtype 存储它们）。
def hbm_bytes_standard(n, d, dtype, block_q=64):
    """HBM bytes of the three unfused kernels (one head, forward)."""
    e = dtype.itemsize
    return e * (2 * n * d + 2 * n * d * math.ceil(n / block_q)) + 4 * 4 * n * n


def hbm_bytes_flash(n, d, sram_bytes, dtype):
    """HBM bytes of the FlashAttention forward pass with the tiling rule (one head)."""
    e = dtype.itemsize
    fit = sram_bytes // (4 * d * e)
    if fit < 16:
        raise ValueError(utils.bilingual("SRAM 放不下 16 行的分块", "the SRAM cannot hold tiles of 16 rows"))
    block = 2 ** (fit.bit_length() - 1)
    return e * (2 * n * d + 2 * n * d * math.ceil(n / block)) + 4 * n
