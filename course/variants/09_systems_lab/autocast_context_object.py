# selftest-replaces: sl_autocast
# Variant: the autocast context built first, a dict comprehension over the gradients. / 变体：先建好 autocast 上下文，对梯度用字典推导。
def autocast_dtypes(model, x, target, dtype):
    context = torch.amp.autocast(device_type=x.device.type, dtype=dtype)
    outputs = {}
    handles = []
    for name, module in model.named_modules():
        if name and next(module.children(), None) is None:
            handles.append(module.register_forward_hook(lambda mod, args, out, n=name: outputs.__setitem__(n, out.dtype)))
    with context:
        param_dtype = next(model.parameters()).dtype
        loss = F.cross_entropy(model(x).flatten(0, -2), target.flatten())
    for handle in handles:
        handle.remove()
    loss.backward()
    grad_dtypes = {p.grad.dtype for p in model.parameters() if p.grad is not None}
    return {**outputs, "parameters": param_dtype, "loss": loss.dtype, "gradients": grad_dtypes.pop()}
