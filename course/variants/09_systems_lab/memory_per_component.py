# selftest-replaces: sl_activation_memory
# Variant: one term per saved tensor, summed from a list. / 变体：每个保存的张量一项，列表求和。
def activation_memory_bytes(config, batch, seq_len, dtype):
    s = torch.finfo(dtype).bits // 8
    B, N, d, f, h = batch, seq_len, config.d_model, config.d_ff, config.num_heads
    stats = 2 * B * N * 4  # mean and rstd of one LayerNorm, float32
    block = [
        B * N * d * s, stats, B * N * d * s,  # ln1: input, statistics, output (q/k/v's input)
        3 * B * N * d * s,  # q, k, v with the heads as batch
        B * h * N * N * s,  # softmax output P
        B * N * d * s,  # merged heads, out_proj's input
        B * N * d * s, stats, B * N * d * s,  # ln2
        B * N * f * s, B * N * f * s,  # GELU's input and output
    ]
    final = [B * N * d * s, stats, B * N * d * s]
    return B * N * 8 + config.num_layers * sum(block) + sum(final)
