# selftest-replaces: tl_best_tile
# Variant: itertools.product and sorting. / 变体：itertools.product 与排序。
import itertools


def best_tile(sram_bytes, d, dtype):
    e = torch.empty(0, dtype=dtype).element_size()
    sizes = [1 << p for p in range(4, 18)]
    ok = [
        (bq, bk)
        for bq, bk in itertools.product(sizes, sizes)
        if e * d * (bq + 2 * bk) + 4 * (bq * d + bq * bk + 2 * bq) <= sram_bytes
    ]
    ok.sort(key=lambda t: (t[0] * t[1], t[0]), reverse=True)
    return ok[0] if ok else None
