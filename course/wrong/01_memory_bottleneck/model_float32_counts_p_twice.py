# selftest-replaces: memory_model
# selftest-must-fail: test_memory_model
# selftest-whole: its own accounting of the peak (every .to() a copy), not the reference's three cases
# Mistake: treats every .to() as a copy: in float32 (where .to returns the same tensor) counts S, a "float32 copy" and
# the softmax output, and in training keeps an input-dtype P beside the float32 one until the peak.
# 错误：把每个 .to() 都当成复制：float32 时（.to 返回的是同一个张量）也计入 S、“float32 副本”和 softmax 输出；
# 训练时还在峰值处多计一个输入 dtype 的 P。
def attention_memory_bytes(batch, heads, n, d, dtype, training, device="cuda"):
    size, fp32 = dtype.itemsize, 4
    scores, rows = batch * heads * n * n, batch * heads * n * d
    tensors = {"Q, K, V": 3 * rows * size}
    if training:
        tensors.update({"O, dO, dV": 3 * rows * size, "P, dP, dS": 3 * scores * fp32})
        tensors["P in the input dtype"] = scores * size  # wrong in float32: P is the softmax output itself
        if device == "cuda":
            tensors["scratch"] = scores * fp32
    else:
        tensors.update({"S": scores * size, "S in float32": scores * fp32, "softmax(S)": scores * fp32})
    return tensors
