# selftest-replaces: sl_activation_memory
# Variant: math.prod of shapes per saved tensor, float32 statistics named. / 变体：每个保存张量的形状用 math.prod。
def activation_memory_bytes(config, batch, seq_len, dtype):
    size = torch.zeros(1, dtype=dtype).element_size()
    B, N, h = batch, seq_len, config.num_heads
    residual = math.prod((B, N, config.d_model))
    hidden = math.prod((B, N, config.d_ff))
    weights = math.prod((B, h, N, N))
    stats = math.prod((B, N, 1)) * 4 * 2
    block = size * (8 * residual + 2 * hidden + weights) + 2 * stats
    return math.prod((B, N)) * 8 + config.num_layers * block + size * 2 * residual + stats
