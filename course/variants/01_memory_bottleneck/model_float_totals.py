# selftest-replaces: memory_model
# Variant: returns floats, in MiB-free bytes, with a zero entry for the gradients that do not exist yet at the peak.
# 变体：返回浮点数（字节），并为峰值时还不存在的梯度列一个 0 项。
def attention_memory_bytes(batch, heads, n, d, dtype, training, device="cuda"):
    size = float(dtype.itemsize)
    e = float(batch * heads) * n * n
    x = float(batch * heads) * n * d
    if training:
        result = {
            "inputs Q, K, V": 3 * x * size,
            "output O, upstream dO, gradient dV": 3 * x * size,
            "softmax output, dP, dS (float32)": 3 * e * 4.0,
            "dQ, dK (computed after the peak)": 0.0,
        }
        if device == "cuda":
            result["kernel scratch (CUDA)"] = e * 4.0
        return result
    if size == 4.0:
        return {"inputs": 3 * x * size, "S and P": 2 * e * size, "O": x * size}
    return {"inputs": 3 * x * size, "S": e * size, "float32 copy and softmax": 2 * e * 4.0}
