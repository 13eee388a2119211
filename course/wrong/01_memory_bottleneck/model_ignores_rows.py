# selftest-replaces: memory_model
# selftest-must-fail: test_memory_model
# selftest-whole: counts only the N×N tensors: its own accounting
# Mistake: counts only the N×N tensors; forgets Q, K, V, O, dO and dV (wrong by d/N and more when N is a few d).
# 错误：只计 N×N 的张量，忘了 Q、K、V、O、dO、dV（N 只有几个 d 时误差可达 d/N 以上）。
def attention_memory_bytes(batch, heads, n, d, dtype, training, device="cuda"):
    size, fp32 = dtype.itemsize, 4
    scores = batch * heads * n * n
    if training:
        tensors = {"P, dP, dS": 3 * scores * fp32}
        if device == "cuda":
            tensors["scratch"] = scores * fp32
        return tensors
    if size == fp32:
        return {"S, P": 2 * scores * size}
    return {"S": scores * size, "S in float32": scores * fp32, "softmax(S)": scores * fp32}
