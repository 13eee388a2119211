# selftest-notebook: recomputation.ipynb
# selftest-replaces: rc_saved_bytes
# selftest-must-fail: test_saved_bytes
# selftest-whole: a different program, not the reference with a change
# Mistake: adds up the bytes of every saved tensor, so a tensor saved twice (ReLU's output) counts twice.
# 错误：把每个被保存的张量的字节都加起来，被保存两次的张量（ReLU 的输出）算了两次。
def saved_bytes(module, x):
    params = {p.data_ptr() for p in [*module.parameters(), *module.buffers()]}
    total = 0

    def pack(tensor):
        nonlocal total
        if tensor.data_ptr() not in params:
            total += tensor.numel() * tensor.element_size()
        return tensor

    with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        module(x)
    return total
