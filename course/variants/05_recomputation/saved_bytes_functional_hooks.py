# selftest-replaces: rc_saved_bytes
# Variant: helper functions at module level; the hooks close over a dict that maps storage address to bytes. / 变体：模块级的辅助函数；hooks 闭包里是一个从存储地址到字节数的字典。
def storage_key(tensor):
    return tensor.untyped_storage().data_ptr()


def make_hooks(ignored, table):
    def pack(tensor):
        key = storage_key(tensor)
        if key not in ignored:
            table[key] = tensor.untyped_storage().nbytes()
        return tensor

    return pack, (lambda tensor: tensor)


def saved_bytes(module, x):
    ignored = {storage_key(p) for p in module.parameters()} | {storage_key(b) for b in module.buffers()}
    table = {}
    pack, unpack = make_hooks(ignored, table)
    with torch.autograd.set_grad_enabled(True), torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        module(x)
    return sum(table.values())
