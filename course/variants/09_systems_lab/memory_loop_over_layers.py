# selftest-replaces: sl_activation_memory
# Variant: a loop over the layers adding each block's bytes, a dict of element sizes. / 变体：逐层循环累加，元素大小查表。
SIZES = {torch.float32: 4, torch.float16: 2, torch.bfloat16: 2, torch.float64: 8}


def activation_memory_bytes(config, batch, seq_len, dtype):
    s, t = SIZES[dtype], batch * seq_len
    total = t * 8
    for _ in range(config.num_layers):
        total += s * t * (8 * config.d_model + 2 * config.d_ff)
        total += s * batch * config.num_heads * seq_len * seq_len
        total += 2 * (2 * t * 4)
    total += 2 * t * config.d_model * s + 2 * t * 4
    return total
