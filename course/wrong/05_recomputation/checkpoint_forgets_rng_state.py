# selftest-notebook: recomputation.ipynb
# selftest-replaces: rc_checkpoint
# selftest-must-fail: test_checkpoint_gradients
# Mistake: recomputes without restoring the random state, so dropout draws new masks and the gradients belong
# to a different network than the forward pass.
# 错误：重算时没有恢复随机数状态，dropout 抽到新的掩码，梯度对应的已经不是前向传播的那个网络。
class SegmentFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, layers, x, *params):
        ctx.layers = layers
        ctx.save_for_backward(x)
        for layer in layers:
            x = layer(x)
        return x

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        params = [p for layer in ctx.layers for p in layer.parameters()]
        x = x.detach().requires_grad_(ctx.needs_input_grad[1])
        with torch.enable_grad():
            out = x
            for layer in ctx.layers:
                out = layer(out)
        wanted = ([x] if x.requires_grad else []) + params
        grads = list(torch.autograd.grad(out, wanted, grad_out, allow_unused=True))
        grad_x = grads.pop(0) if x.requires_grad else None
        return None, grad_x, *grads


def checkpointed_forward(layers, x, segments):
    layers = list(layers)
    size, extra = divmod(len(layers), segments)
    start = 0
    for j in range(segments):
        part = layers[start : start + size + (j < extra)]
        start += len(part)
        x = SegmentFunction.apply(part, x, *[p for layer in part for p in layer.parameters()])
    return x
