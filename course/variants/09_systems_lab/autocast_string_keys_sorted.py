# selftest-replaces: sl_autocast
# Variant: leaves found by recursion over named_children, loss with reshape. / 变体：递归 named_children 找叶子，用 reshape 计算损失。
def leaves(module, prefix=""):
    children = list(module.named_children())
    if not children:
        yield prefix, module
    for name, child in children:
        yield from leaves(child, f"{prefix}.{name}" if prefix else name)


def autocast_dtypes(model, x, target, dtype):
    table, hooks = {}, []
    for name, module in leaves(model):
        if name:
            hooks.append(module.register_forward_hook(lambda m, i, o, key=name: table.update({key: o.dtype})))
    with torch.autocast(x.device.type, dtype=dtype):
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))
        table["parameters"] = next(iter(model.parameters())).dtype
    for h in hooks:
        h.remove()
    loss.backward()
    table["loss"] = loss.dtype
    table["gradients"] = next(iter(model.parameters())).grad.dtype
    return table
