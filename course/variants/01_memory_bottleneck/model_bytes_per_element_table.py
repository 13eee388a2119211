# selftest-replaces: memory_model
# Variant: a table of bytes per score element and N×d tensors alive at the peak, looked up by case.
# 变体：按情形查表：峰值时每个分数元素的字节数，以及存活的 N×d 张量个数。
PEAK = {  # (training, half precision, cuda) -> (bytes per score element, N×d tensors in the input dtype)
    (False, False, False): (8, 4),
    (False, False, True): (8, 4),
    (False, True, False): (None, 3),  # S in the input dtype + two float32 copies
    (False, True, True): (None, 3),
    (True, False, False): (12, 6),
    (True, True, False): (12, 6),
    (True, False, True): (16, 6),
    (True, True, True): (16, 6),
}


def attention_memory_bytes(batch, heads, n, d, dtype, training, device="cuda"):
    size = torch.empty((), dtype=dtype).element_size()
    per_score, rows = PEAK[(bool(training), size < 4, "cuda" in str(device))]
    if per_score is None:
        per_score = size + 8
    return {
        "N×N tensors": per_score * batch * heads * n * n,
        "N×d tensors": rows * batch * heads * n * d * size,
    }
