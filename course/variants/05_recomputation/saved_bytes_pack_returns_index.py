# selftest-replaces: rc_saved_bytes
# Variant: pack stores each tensor in a list and hands autograd its index (unpack looks it up), as offloading hooks do. / 变体：pack 把张量放进列表、交给 autograd 一个下标（unpack 再查回来），就像卸载激活的 hooks 那样。
def saved_bytes(module, x):
    kept = []

    def pack(tensor):
        kept.append(tensor)
        return len(kept) - 1

    def unpack(index):
        return kept[index]

    excluded = set()
    for tensor in list(module.parameters()) + list(module.buffers()):
        excluded.add(tensor.untyped_storage().data_ptr())
    prev = torch.is_grad_enabled()
    torch.set_grad_enabled(True)
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            module(x)
    finally:
        torch.set_grad_enabled(prev)
    counted = {}
    for tensor in kept:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in excluded:
            counted.setdefault(storage.data_ptr(), storage.nbytes())
    return sum(counted.values())
