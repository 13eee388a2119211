# selftest-replaces: rc_checkpoint
# Variant: like checkpoint_sequential, the last segment runs with plain autograd (its activations are needed at once); earlier segments are checkpointed. / 变体：像 checkpoint_sequential 那样，最后一段用普通 autograd 运行（它的激活马上就要用），之前的段做检查点。
class SegmentFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, layers, x, *params):
        ctx.layers = layers
        ctx.devices = [x.device] if x.is_cuda else []
        ctx.states = (torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in ctx.devices])
        ctx.save_for_backward(x)
        for layer in layers:
            x = layer(x)
        return x

    @staticmethod
    def backward(ctx, grad_out):
        (saved,) = ctx.saved_tensors
        x = saved.detach().requires_grad_(ctx.needs_input_grad[1])
        params = [p for layer in ctx.layers for p in layer.parameters()]
        with torch.random.fork_rng(devices=ctx.devices):
            torch.set_rng_state(ctx.states[0])
            for device, state in zip(ctx.devices, ctx.states[1]):
                torch.cuda.set_rng_state(state, device)
            with torch.enable_grad():
                out = x
                for layer in ctx.layers:
                    out = layer(out)
        inputs = ([x] if x.requires_grad else []) + params
        grads = list(torch.autograd.grad(out, inputs, grad_out, allow_unused=True))
        return (None, grads.pop(0) if x.requires_grad else None, *grads)


def checkpointed_forward(layers, x, segments):
    layers = list(layers)
    bounds = [round(j * len(layers) / segments) for j in range(segments + 1)]
    for start, stop in zip(bounds[:-2], bounds[1:-1]):
        part = layers[start:stop]
        x = SegmentFunction.apply(part, x, *[p for layer in part for p in layer.parameters()])
    for layer in layers[bounds[-2] :]:
        x = layer(x)
    return x
