# selftest-notebook: recomputation.ipynb
# selftest-replaces: rc_saved_bytes
# selftest-must-fail: test_saved_bytes
# Mistake: counts every saved storage once, but the weights that Linear saves are counted as activations.
# 错误：每个存储只算一次，但把 Linear 保存的权重也算成了激活。
def saved_bytes(module, x):
    storages = {}

    def pack(tensor):
        storages[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes()
        return tensor

    with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        module(x)
    return sum(storages.values())
