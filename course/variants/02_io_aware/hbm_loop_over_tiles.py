# selftest-replaces: io_hbm_bytes
# Variant: walks the query tiles as the kernels do and adds up what each program reads and writes. / 变体：像内核那样逐个查询块累加每个程序读写的字节。
def _programs(n, block):
    for start in range(0, n, block):
        yield min(block, n - start)  # rows of this query tile (the tail is shorter)


def hbm_bytes_standard(n, d, dtype, block_q=64):
    e = dtype.itemsize
    total = 0
    for rows in _programs(n, block_q):
        total += e * (rows * d + n * d + rows * n)  # scores: Q tile, all of K, S rows
        total += e * (rows * n + n * d + rows * d)  # pv: P rows, all of V, O tile
    return total + e * 2 * n * n  # softmax: read S, write P


def hbm_bytes_flash(n, d, sram_bytes, dtype):
    e = dtype.itemsize
    block = 1
    while 4 * (2 * block) * d * e <= sram_bytes:
        block *= 2
    if block < 16:
        raise ValueError("the SRAM cannot hold four 16×d tiles")
    return sum(e * (2 * rows * d + 2 * n * d) + 4 * rows for rows in _programs(n, block))
