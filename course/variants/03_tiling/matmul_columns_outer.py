# selftest-replaces: tl_matmul
# Variant: column tiles of C in the outer loop, row tiles inside (same traffic). / 变体：外层遍历 C 的列块。
def tiled_matmul(mem, block_m, block_n, block_k):
    m, k = mem["A"].shape
    n = mem["B"].shape[1]
    for j in range(0, n, block_n):
        for i in range(0, m, block_m):
            acc = None
            for p in range(0, k, block_k):
                part = mem["A"][i : i + block_m, p : p + block_k].to(torch.float32) @ mem["B"][p : p + block_k, j : j + block_n].to(torch.float32)
                acc = part if acc is None else acc + part
            mem["C"][i : i + block_m, j : j + block_n] = acc
