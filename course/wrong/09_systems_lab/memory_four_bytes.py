# selftest-notebook: systems_lab.ipynb
# selftest-replaces: sl_activation_memory
# selftest-must-fail: test_activation_memory
# selftest-whole: a different program, not the reference with a change
# Mistake: four bytes per element whatever the dtype. / 错误：不论 dtype，每个元素都按 4 字节算。
def activation_memory_bytes(config, batch, seq_len, dtype):
    tokens = batch * seq_len
    d, d_ff, heads = config.d_model, config.d_ff, config.num_heads
    per_block = (8 * tokens * d + 2 * tokens * d_ff + batch * heads * seq_len**2) * 4 + 4 * tokens * 4
    return 8 * tokens + config.num_layers * per_block + 2 * tokens * d * 4 + 2 * tokens * 4
