# selftest-replaces: memory_model
# selftest-must-fail: test_memory_model
# selftest-whole: its own accounting without the backward's tensors, not the reference's three cases
# Mistake: training = the forward peak plus what autograd saves; forgets the gradients dP and dS of the backward pass.
# 错误：训练 = 前向峰值加上 autograd 保存的张量；忘了反向传播中的梯度 dP 和 dS。
def attention_memory_bytes(batch, heads, n, d, dtype, training, device="cuda"):
    size, fp32 = dtype.itemsize, 4
    scores, rows = batch * heads * n * n, batch * heads * n * d
    tensors = {"Q, K, V": 3 * rows * size}
    if size == fp32:
        tensors.update({"S, P": 2 * scores * size, "O": rows * size})
    else:
        tensors.update({"S": scores * size, "S in float32": scores * fp32, "softmax(S)": scores * fp32})
    return tensors
