# selftest-replaces: tl_matmul
# selftest-caps: test_tiled_matmul=2
# selftest-class: uncounted-traffic
# selftest-whole: keeps its accumulator in a scratch tensor in slow memory: another loop body
# Attack: keeps its float32 accumulator in a scratch tensor in slow memory between k-steps, read and written
# through the slow tensor's private _data, past the counter; only A, B and the final C show.
# 攻击：各个 k 步之间把 float32 累加器放在慢速内存的临时张量里，经由慢速张量的私有 _data 读写，绕过计数器；
# 只有 A、B 和最后的 C 被计数。
def tiled_matmul(mem, block_m, block_n, block_k):
    (m, k), n = mem["A"].shape, mem["B"].shape[1]
    acc = mem.alloc("acc", (m, n), torch.float32)._data
    for i in range(0, m, block_m):
        for j in range(0, n, block_n):
            for p in range(0, k, block_k):
                a = mem["A"][i : i + block_m, p : p + block_k].float()
                acc[i : i + block_m, j : j + block_n] += a @ mem["B"][p : p + block_k, j : j + block_n].float()
            mem["C"][i : i + block_m, j : j + block_n] = acc[i : i + block_m, j : j + block_n]
