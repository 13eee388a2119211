# selftest-replaces: tl_best_tile
# Variant: solves for the largest Bk per Bq in closed form, then rounds down to a power of two. / 变体：闭式求 Bk。
def best_tile(sram_bytes, d, dtype):
    e = dtype.itemsize
    best = None
    for p in range(4, 20):
        bq = 2**p
        room = sram_bytes - e * d * bq - 4 * bq * d - 8 * bq
        if room < 0:
            break
        largest_bk = room // (2 * e * d + 4 * bq)
        if largest_bk < 16:
            break
        bk = 2 ** int(math.log2(largest_bk))
        if best is None or (bq * bk, bq) > (best[0] * best[1], best[0]):
            best = (bq, bk)
    return best
