# selftest-notebook: recomputation.ipynb
# selftest-replaces: rc_checkpoint
# selftest-must-fail: test_checkpoint_gradients
# Mistake: cuts `segments` pieces of len(layers) // segments layers and forgets the remainder: when the layers do
# not divide evenly, the last layers never run.
# 错误：切出 `segments` 段、每段 len(layers) // segments 层，忘了余数：层数不能整除时，最后几层根本没有运行。
class SegmentFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, layers, x, *params):
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
        params = [p for layer in ctx.layers for p in layer.parameters()]
        x = x.detach().requires_grad_(ctx.needs_input_grad[1])
        with torch.random.fork_rng(devices=[x.device] if x.is_cuda else []):
            torch.set_rng_state(ctx.cpu_state)
            if ctx.cuda_state is not None:
                torch.cuda.set_rng_state(ctx.cuda_state, x.device)
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
    size = len(layers) // segments
    for j in range(segments):
        part = layers[j * size : (j + 1) * size]
        x = SegmentFunction.apply(part, x, *[p for layer in part for p in layer.parameters()])
    return x
