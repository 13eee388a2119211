# selftest-replaces: sl_activation_memory
# Variant: elements of each dtype first, bytes at the end; itemsize from a tensor. / 变体：先数各 dtype 的元素，最后换算成字节。
def activation_memory_bytes(config, batch, seq_len, dtype):
    itemsize = torch.tensor([], dtype=dtype).itemsize
    activations = config.num_layers * (
        batch * seq_len * (8 * config.d_model + 2 * config.d_ff) + batch * config.num_heads * seq_len * seq_len
    ) + 2 * batch * seq_len * config.d_model
    statistics_f32 = 2 * batch * seq_len * (2 * config.num_layers + 1)
    ids = batch * seq_len
    return int(activations * itemsize + statistics_f32 * 4 + ids * torch.tensor([], dtype=torch.int64).itemsize)
