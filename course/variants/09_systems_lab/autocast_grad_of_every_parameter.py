# selftest-replaces: sl_autocast
# Variant: hooks through a global forward hook filtered by module, gradients read from torch.autograd.grad. / 变体：按模块过滤的全局前向钩子，梯度来自 torch.autograd.grad。
def autocast_dtypes(model, x, target, dtype):
    names = {m: name for name, m in model.named_modules() if name and len(list(m.children())) == 0}
    table = {}

    def record(module, inputs, output):
        if module in names:
            table[names[module]] = output.dtype

    handle = torch.nn.modules.module.register_module_forward_hook(record)
    try:
        with torch.autocast(device_type=x.device.type, dtype=dtype):
            table["parameters"] = {p.dtype for p in model.parameters()}.pop()
            loss = F.cross_entropy(model(x).flatten(0, -2), target.flatten())
    finally:
        handle.remove()
    table["loss"] = loss.dtype
    grads = torch.autograd.grad(loss, list(model.parameters()))
    table["gradients"] = grads[0].dtype
    return table
