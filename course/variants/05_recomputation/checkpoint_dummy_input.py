# selftest-replaces: rc_checkpoint
# Variant: the reentrant design made safe: a dummy input that needs a gradient keeps every segment on the graph, and backward accumulates the parameters' gradients itself with torch.autograd.backward. / 变体：让可重入做法变安全：一个需要梯度的哑输入让每段都留在计算图上，backward 自己用 torch.autograd.backward 累加参数梯度。
class ReentrantSegment(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run, dummy, x):
        ctx.run = run
        ctx.cpu_rng = torch.get_rng_state()
        ctx.gpu_rng = torch.cuda.get_rng_state(x.device) if x.device.type == "cuda" else None
        ctx.save_for_backward(x)
        return run(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        inner = x.detach()
        inner.requires_grad = ctx.needs_input_grad[2]
        devices = [x.device] if ctx.gpu_rng is not None else []
        with torch.random.fork_rng(devices=devices):
            torch.set_rng_state(ctx.cpu_rng)
            if ctx.gpu_rng is not None:
                torch.cuda.set_rng_state(ctx.gpu_rng, x.device)
            with torch.enable_grad():
                out = ctx.run(inner)
        torch.autograd.backward(out, grad_out)
        return None, None, inner.grad


def checkpointed_forward(layers, x, segments):
    layers = list(layers)
    dummy = torch.empty(0, requires_grad=True)
    size, extra = divmod(len(layers), segments)
    start = 0
    for j in range(segments):
        stop = start + size + (1 if j < extra else 0)
        run = nn.Sequential(*layers[start:stop])
        x = ReentrantSegment.apply(run, dummy, x)
        start = stop
    return x
