# selftest-notebook: systems_lab.ipynb
# selftest-replaces: sl_autocast
# selftest-must-fail: test_autocast
# selftest-selfcheck-fails: test_autocast
# selftest-whole: a different program, not the reference with a change
# Mistake: runs the model outside autocast (the context is entered after the forward pass). / 错误：在 autocast 之外运行模型。
def autocast_dtypes(model, x, target, dtype):
    table = {}
    leaves = [(name, m) for name, m in model.named_modules() if name and not any(m.children())]
    hooks = [m.register_forward_hook(lambda _m, _i, out, name=name: table.__setitem__(name, out.dtype)) for name, m in leaves]
    logits = model(x)
    with torch.autocast(x.device.type, dtype=dtype):
        table["parameters"] = next(model.parameters()).dtype
        loss = F.cross_entropy(logits.flatten(0, -2), target.flatten())
    table["loss"] = loss.dtype
    loss.backward()
    table["gradients"] = next(model.parameters()).grad.dtype
    for hook in hooks:
        hook.remove()
    return table
