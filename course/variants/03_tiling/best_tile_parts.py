# selftest-replaces: tl_best_tile
# Variant: the on-chip bytes as a sum of named parts, the largest Bk per Bq by doubling. / 变体：分项相加。
def on_chip(bq, bk, d, e):
    q_tile, k_tile, v_tile = bq * d * e, bk * d * e, bk * d * e
    o_acc, scores, stats = bq * d * 4, bq * bk * 4, 2 * bq * 4
    return q_tile + k_tile + v_tile + o_acc + scores + stats


def best_tile(sram_bytes, d, dtype):
    e = dtype.itemsize
    best = None
    bq = 16
    while on_chip(bq, 16, d, e) <= sram_bytes:
        bk = 16
        while on_chip(bq, bk * 2, d, e) <= sram_bytes:
            bk *= 2
        if best is None or bq * bk >= best[0] * best[1]:
            best = (bq, bk)
        bq *= 2
    return best
