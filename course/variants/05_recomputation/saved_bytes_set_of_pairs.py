# selftest-replaces: rc_saved_bytes
# Variant: a set of (address, bytes) pairs, state identified through named_parameters/named_buffers. / 变体：用（地址，字节数）二元组的集合，模块状态通过 named_parameters/named_buffers 取得。
def saved_bytes(module, x):
    state = {t.untyped_storage().data_ptr() for _, t in module.named_parameters()}
    state |= {t.untyped_storage().data_ptr() for _, t in module.named_buffers()}
    seen = set()

    def pack(tensor):
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in state:
            seen.add((storage.data_ptr(), storage.nbytes()))
        return tensor

    with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = module(x)
    total = sum(nbytes for _, nbytes in seen)
    del result
    return total
