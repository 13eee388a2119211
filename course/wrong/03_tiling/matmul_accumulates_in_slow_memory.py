# selftest-replaces: tl_matmul
# selftest-must-fail: test_tiled_matmul
# selftest-selfcheck-fails: test_tiled_matmul
# selftest-whole: accumulates into C in slow memory: another loop body
# Mistake: adds each k-step's product into C in slow memory (read C, add, write C), so C moves ⌈k/block_k⌉ times.
# 错误：每一步都把乘积加进慢速内存里的 C（读 C、相加、写 C），C 被搬了 ⌈k/block_k⌉ 次。
def tiled_matmul(mem, block_m, block_n, block_k):
    (m, k), n = mem["A"].shape, mem["B"].shape[1]
    for i in range(0, m, block_m):
        for j in range(0, n, block_n):
            for p in range(0, k, block_k):
                part = mem["A"][i : i + block_m, p : p + block_k].float() @ mem["B"][p : p + block_k, j : j + block_n].float()
                if p > 0:
                    part = part + mem["C"][i : i + block_m, j : j + block_n].float()
                mem["C"][i : i + block_m, j : j + block_n] = part
