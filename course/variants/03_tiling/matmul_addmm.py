# selftest-replaces: tl_matmul
# Variant: explicit tile ends and torch.addmm into the accumulator. / 变体：显式的块端点与 torch.addmm。
def tiled_matmul(mem, block_m, block_n, block_k):
    m, k = mem["A"].shape
    n = mem["B"].shape[1]
    for r0 in range(0, m, block_m):
        r1 = min(r0 + block_m, m)
        for c0 in range(0, n, block_n):
            c1 = min(c0 + block_n, n)
            acc = torch.zeros(r1 - r0, c1 - c0, dtype=torch.float32)
            for p0 in range(0, k, block_k):
                p1 = min(p0 + block_k, k)
                acc = torch.addmm(acc, mem["A"][r0:r1, p0:p1].float(), mem["B"][p0:p1, c0:c1].float())
            mem["C"][r0:r1, c0:c1] = acc
