# selftest-replaces: io_hbm_bytes
# Variant: reads and writes counted separately, per kernel, then added. / 变体：按内核分别数读和写，再相加。
def hbm_bytes_standard(n, d, dtype, block_q=64):
    e, tiles = dtype.itemsize, math.ceil(n / block_q)
    scores_read, scores_written = n * d + n * d * tiles, n * n
    softmax_read, softmax_written = n * n, n * n
    pv_read, pv_written = n * n + n * d * tiles, n * d
    reads = scores_read + softmax_read + pv_read
    writes = scores_written + softmax_written + pv_written
    return int(e * (reads + writes))


def hbm_bytes_flash(n, d, sram_bytes, dtype):
    e = dtype.itemsize
    candidates = [2**k for k in range(4, 40) if 4 * 2**k * d * e <= sram_bytes]
    if not candidates:
        raise ValueError(f"no 16-row tiling fits in {sram_bytes} bytes")
    tiles = math.ceil(n / candidates[-1])
    reads = n * d + 2 * n * d * tiles
    writes = n * d
    return int(e * (reads + writes) + 4 * n)
