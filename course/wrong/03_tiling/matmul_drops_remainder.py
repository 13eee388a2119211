# selftest-replaces: tl_matmul
# selftest-must-fail: test_tiled_matmul
# selftest-selfcheck-fails: test_tiled_matmul
# selftest-whole: three loop bounds changed: the patch is longer than the cell
# Mistake: loops only over whole tiles (range(0, m - block_m + 1, block_m)), so the remainder tiles of C stay unwritten.
# 错误：只遍历完整的块，C 的余数块没有写。
def tiled_matmul(mem, block_m, block_n, block_k):
    (m, k), n = mem["A"].shape, mem["B"].shape[1]
    for i in range(0, m - block_m + 1, block_m):
        for j in range(0, n - block_n + 1, block_n):
            acc = torch.zeros(block_m, block_n)
            for p in range(0, k - block_k + 1, block_k):
                acc += mem["A"][i : i + block_m, p : p + block_k].float() @ mem["B"][p : p + block_k, j : j + block_n].float()
            mem["C"][i : i + block_m, j : j + block_n] = acc
