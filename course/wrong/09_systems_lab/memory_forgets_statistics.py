# selftest-notebook: systems_lab.ipynb
# selftest-replaces: sl_activation_memory
# selftest-must-fail: test_activation_memory
# selftest-selfcheck-fails: test_activation_memory
# Mistake: forgets LayerNorm's mean and rstd and the input ids. / 错误：漏掉 LayerNorm 的均值、rstd 和输入的 id。
def activation_memory_bytes(config, batch, seq_len, dtype):
    size = torch.empty((), dtype=dtype).element_size()
    tokens = batch * seq_len
    d, d_ff, heads = config.d_model, config.d_ff, config.num_heads
    per_block = (8 * tokens * d + 2 * tokens * d_ff + batch * heads * seq_len**2) * size
    return config.num_layers * per_block + 2 * tokens * d * size
