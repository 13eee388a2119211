# selftest-notebook: memory_bottleneck.ipynb
# selftest-replaces: memory_model
# selftest-must-fail: test_memory_model
# selftest-whole: a different program, not the reference with a change
# Mistake: counts every tensor in the input dtype: forgets that the softmax runs on float32 copies.
# 错误：所有张量都按输入 dtype 计：忘了 softmax 是在 float32 副本上计算的。
def attention_memory_bytes(batch, heads, n, d, dtype, training, device="cuda"):
    size = dtype.itemsize
    scores, rows = batch * heads * n * n * size, batch * heads * n * d * size
    tensors = {"Q, K, V": 3 * rows}
    if training:
        tensors.update({"O, dO, dV": 3 * rows, "P, dP, dS": 3 * scores})
        if device == "cuda":
            tensors["scratch"] = scores
    else:
        tensors.update({"S, P": 2 * scores, "O": rows})
    return tensors
