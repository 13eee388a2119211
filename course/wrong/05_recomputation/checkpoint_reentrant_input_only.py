# selftest-notebook: recomputation.ipynb
# selftest-replaces: rc_checkpoint
# selftest-must-fail: test_checkpoint_gradients
# Mistake: the reentrant design: the segment joins the graph only through x and backpropagates the parameters
# inside backward, so when x needs no gradient the output needs none and the parameters get nothing.
# 错误：可重入的做法：每段只通过 x 接入计算图，在 backward 里面反传参数；x 不需要梯度时输出也不需要，参数得不到梯度。
class SegmentFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, layers, x):
        ctx.layers = layers
        ctx.cpu_state = torch.get_rng_state()
        ctx.cuda_state = torch.cuda.get_rng_state(x.device) if x.is_cuda else None
        ctx.save_for_backward(x)
        for layer in layers:
            x = layer(x)
        return x

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        x = x.detach().requires_grad_(True)
        with torch.random.fork_rng(devices=[x.device] if x.is_cuda else []):
            torch.set_rng_state(ctx.cpu_state)
            if ctx.cuda_state is not None:
                torch.cuda.set_rng_state(ctx.cuda_state, x.device)
            with torch.enable_grad():
                out = x
                for layer in ctx.layers:
                    out = layer(out)
        torch.autograd.backward(out, grad_out)
        return None, x.grad


def checkpointed_forward(layers, x, segments):
    layers = list(layers)
    size, extra = divmod(len(layers), segments)
    start = 0
    for j in range(segments):
        part = layers[start : start + size + (j < extra)]
        start += len(part)
        x = SegmentFunction.apply(part, x)
    return x
