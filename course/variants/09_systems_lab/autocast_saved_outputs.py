# selftest-replaces: sl_autocast
# Variant: keeps each leaf's output tensor and reads the dtypes afterwards; gradients zeroed with a loop. / 变体：保留每个叶子的输出张量，之后再读 dtype；用循环清零梯度。
def autocast_dtypes(model, x, target, dtype):
    outputs = {}
    handles = []
    for name, module in model.named_modules():
        if name and len(module._modules) == 0:
            handles.append(module.register_forward_hook(lambda m, i, o, name=name: outputs.__setitem__(name, o)))
    for p in model.parameters():
        p.grad = None
    with torch.autocast(x.device.type, dtype):
        parameters = [p.dtype for p in model.parameters()]
        loss = F.cross_entropy(model(x).flatten(0, -2), target.flatten())
    for handle in handles:
        handle.remove()
    loss.backward()
    table = {name: out.dtype for name, out in outputs.items()}
    table.update(parameters=parameters[0], loss=loss.dtype, gradients=[p.grad.dtype for p in model.parameters()][0])
    return table
