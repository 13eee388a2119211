# selftest-replaces: tl_matmul
# Variant: precomputed lists of tile slices and einsum for the tile product. / 变体：预先算好块的切片，用 einsum 相乘。
def spans(size, block):
    return [slice(s, min(s + block, size)) for s in range(0, size, block)]


def tiled_matmul(mem, block_m, block_n, block_k):
    m, k = mem["A"].shape
    n = mem["B"].shape[1]
    for rs in spans(m, block_m):
        for cs in spans(n, block_n):
            acc = 0
            for ks in spans(k, block_k):
                acc = acc + torch.einsum("ik,kj->ij", mem["A"][rs, ks].float(), mem["B"][ks, cs].float())
            mem["C"][rs, cs] = acc
