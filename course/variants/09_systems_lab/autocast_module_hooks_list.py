# selftest-replaces: sl_autocast
# Variant: forward hooks with kwargs, the model's parameters copied to a list, torch.amp namespace. / 变体：带 kwargs 的前向钩子，参数列表，torch.amp 命名空间。
def autocast_dtypes(model, x, target, dtype):
    params = list(model.parameters())
    seen = {}

    def hook_for(name):
        def hook(module, args, kwargs, out):
            seen.setdefault(name, out.dtype)  # returns None: a hook that returns a value replaces the output

        return hook

    handles = [
        module.register_forward_hook(hook_for(name), with_kwargs=True)
        for name, module in model.named_modules()
        if name and not list(module.children())
    ]
    with torch.amp.autocast(x.device.type, dtype=dtype):
        seen["parameters"] = params[0].dtype
        out = model(x)
        seen["loss"] = F.cross_entropy(out.flatten(0, -2), target.flatten())
    for handle in handles:
        handle.remove()
    seen["loss"].backward()
    seen["loss"] = seen["loss"].dtype
    seen["gradients"] = params[-1].grad.dtype
    return seen
