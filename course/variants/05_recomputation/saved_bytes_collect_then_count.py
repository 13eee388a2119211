# selftest-replaces: rc_saved_bytes
# Variant: the hook only collects the saved tensors; counting (by device and storage address) happens afterwards. / 变体：hook 只收集被保存的张量，之后再按设备和存储地址计数。
def saved_bytes(module, x):
    collected = []

    def pack(tensor):
        collected.append(tensor)
        return tensor

    with torch.enable_grad():
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            out = module(x)
    state = {(t.device, t.untyped_storage().data_ptr()) for t in module.state_dict(keep_vars=True).values()}
    sizes = {}
    for tensor in collected:
        key = (tensor.device, tensor.untyped_storage().data_ptr())
        if key not in state:
            sizes[key] = tensor.untyped_storage().nbytes()
    del out
    return int(sum(sizes.values()))
