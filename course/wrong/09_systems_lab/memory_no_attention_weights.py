# selftest-notebook: systems_lab.ipynb
# selftest-replaces: sl_activation_memory
# selftest-must-fail: test_activation_memory
# selftest-selfcheck-fails: test_activation_memory
# selftest-whole: a different program, not the reference with a change
# Mistake: forgets the softmax output P (B·h·N² per block). / 错误：漏掉 softmax 的输出 P（每块 B·h·N²）。
def activation_memory_bytes(config, batch, seq_len, dtype):
    size = torch.empty((), dtype=dtype).element_size()
    tokens = batch * seq_len
    per_block = (8 * tokens * config.d_model + 2 * tokens * config.d_ff) * size + 4 * tokens * 4
    return 8 * tokens + config.num_layers * per_block + 2 * tokens * config.d_model * size + 2 * tokens * 4
