# selftest-replaces: sl_autocast
# selftest-must-fail: test_autocast
# selftest-selfcheck-fails: test_autocast
# selftest-whole: assumes the loss and gradient dtypes instead of running backward
# Mistake: reports the loss and the gradients in the autocast dtype (assumed, not observed). / 错误：假定损失和梯度是 autocast 的 dtype，而不是观察它们。
def autocast_dtypes(model, x, target, dtype):
    table = {}
    leaves = [(name, m) for name, m in model.named_modules() if name and not any(m.children())]
    hooks = [m.register_forward_hook(lambda _m, _i, out, name=name: table.__setitem__(name, out.dtype)) for name, m in leaves]
    with torch.autocast(x.device.type, dtype=dtype):
        table["parameters"] = next(model.parameters()).dtype
        model(x)
    for hook in hooks:
        hook.remove()
    table["loss"], table["gradients"] = dtype, dtype
    return table
