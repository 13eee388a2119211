# selftest-replaces: sl_autocast
# selftest-must-fail: test_autocast
# selftest-selfcheck-fails: test_autocast
# selftest-whole: a table written from memory instead of running the model
# Mistake: writes down the CUDA table from memory (LayerNorm float32, everything else low precision) instead of running the model. / 错误：凭记忆写下 CUDA 的表，而不是运行模型。
def autocast_dtypes(model, x, target, dtype):
    table = {"parameters": torch.float32, "loss": torch.float32, "gradients": torch.float32}
    for name, m in model.named_modules():
        if name and not any(m.children()):
            table[name] = torch.float32 if isinstance(m, nn.LayerNorm) else dtype
    return table
