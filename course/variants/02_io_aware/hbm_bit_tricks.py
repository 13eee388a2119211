# selftest-replaces: io_hbm_bytes
# Variant: integer bit tricks for the power of two and the ceiling; a shared helper for K/V re-reads. / 变体：用位运算求 2 的幂和上取整。
def _kv_bytes(n, d, e, block):
    return 2 * e * n * d * ((n + block - 1) // block)


def hbm_bytes_standard(n, d, dtype, block_q=64):
    e = dtype.itemsize
    return 2 * e * n * d + _kv_bytes(n, d, e, block_q) + 4 * e * n * n


def hbm_bytes_flash(n, d, sram_bytes, dtype):
    e = dtype.itemsize
    fit = sram_bytes // (4 * d * e)
    if fit < 16:
        raise ValueError("16 rows do not fit")
    block = 1 << (fit.bit_length() - 1)
    return 2 * e * n * d + _kv_bytes(n, d, e, block) + 4 * n
