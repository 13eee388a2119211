# selftest-replaces: io_hbm_bytes
# Variant: a per-tensor breakdown (elements read and written per tensor) summed at the end. / 变体：按张量列出读写的元素数，最后求和。
def standard_breakdown(n, d, block_q):
    tiles = -(-n // block_q)
    return {"Q": n * d, "K": n * d * tiles, "S": 2 * n * n, "P": 2 * n * n, "V": n * d * tiles, "O": n * d}


def hbm_bytes_standard(n, d, dtype, block_q=64):
    return dtype.itemsize * sum(standard_breakdown(n, d, block_q).values())


def hbm_bytes_flash(n, d, sram_bytes, dtype):
    block = 16
    if 4 * block * d * dtype.itemsize > sram_bytes:
        raise ValueError("SRAM too small for 16-row tiles")
    while 4 * (2 * block) * d * dtype.itemsize <= sram_bytes:
        block *= 2
    tiles = -(-n // block)
    elements = {"Q": n * d, "K": n * d * tiles, "V": n * d * tiles, "O": n * d}
    return dtype.itemsize * sum(elements.values()) + 4 * n  # + L, float32
