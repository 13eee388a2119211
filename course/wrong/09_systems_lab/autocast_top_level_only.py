# selftest-notebook: systems_lab.ipynb
# selftest-replaces: sl_autocast
# selftest-must-fail: test_autocast
# selftest-whole: a different program, not the reference with a change
# Mistake: hooks only the model's direct children (named_children), so nested leaves are missing and containers appear. / 错误：只挂在直接子模块上，嵌套的叶子缺失，容器却出现了。
def autocast_dtypes(model, x, target, dtype):
    table = {}
    hooks = [m.register_forward_hook(lambda _m, _i, out, name=name: table.__setitem__(name, out.dtype)) for name, m in model.named_children()]
    with torch.autocast(x.device.type, dtype=dtype):
        table["parameters"] = next(model.parameters()).dtype
        loss = F.cross_entropy(model(x).flatten(0, -2), target.flatten())
    table["loss"] = loss.dtype
    loss.backward()
    table["gradients"] = next(model.parameters()).grad.dtype
    for hook in hooks:
        hook.remove()
    return table
