# selftest-replaces: memory_model
# selftest-must-fail: test_memory_model
# selftest-whole: the textbook count in one line
# Mistake: the textbook count: Q, K, V, O and one S and one P in the input dtype, in training as in inference.
# 错误：教科书式的计数：输入 dtype 的 Q、K、V、O 加一个 S、一个 P，训练与推理相同。
def attention_memory_bytes(batch, heads, n, d, dtype, training, device="cuda"):
    size = dtype.itemsize
    return {"Q, K, V, O": 4 * batch * heads * n * d * size, "S, P": 2 * batch * heads * n * n * size}
