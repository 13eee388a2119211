# selftest-replaces: sl_activation_memory
# Variant: LayerNorm statistics in the activations' dtype (the CPU's kernel), as measured on a CPU. / 变体：LayerNorm 统计量用激活的 dtype（CPU 内核），与 CPU 上的测量一致。
def activation_memory_bytes(config, batch, seq_len, dtype):
    s = torch.empty(0, dtype=dtype).element_size()
    tokens = batch * seq_len
    layer_norms = 2 * config.num_layers + 1
    per_layer = 8 * tokens * config.d_model + 2 * tokens * config.d_ff + batch * config.num_heads * seq_len**2
    return 8 * tokens + s * (config.num_layers * per_layer + 2 * tokens * config.d_model + 2 * tokens * layer_norms)
