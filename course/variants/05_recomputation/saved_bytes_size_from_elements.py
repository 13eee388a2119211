# selftest-replaces: rc_saved_bytes
# Variant: identifies storages by `untyped_storage()._cdata` and takes their bytes from `size()` (in bytes for an untyped storage). / 变体：用 `untyped_storage()._cdata` 识别存储，字节数取自 `size()`（untyped storage 的 size 以字节计）。
def saved_bytes(module, x):
    state = set()
    for t in (*module.parameters(), *module.buffers()):
        state.add(t.untyped_storage()._cdata)
    found = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        if storage._cdata not in state:
            found[storage._cdata] = storage.size()
        return tensor

    with torch.enable_grad():
        hooks = torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor)
        with hooks:
            output = module(x)
    answer = 0
    for nbytes in found.values():
        answer += nbytes
    del output
    return answer
