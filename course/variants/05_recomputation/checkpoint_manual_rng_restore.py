# selftest-replaces: rc_checkpoint
# Variant: no fork_rng: backward saves the current random state itself, replays the segment's, and puts the current one back; the input's and the parameters' gradients come from two autograd.grad calls. / 变体：不用 fork_rng：backward 自己保存当前的随机状态、重放这一段的状态，再放回当前状态；输入和参数的梯度分两次 autograd.grad 求出。
class Checkpointed(torch.autograd.Function):
    @staticmethod
    def forward(ctx, block, x, *weights):
        ctx.block = block
        ctx.rng = torch.get_rng_state()
        ctx.cuda_rng = torch.cuda.get_rng_state(x.device) if x.is_cuda else None
        ctx.save_for_backward(x)
        return block(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        weights = list(ctx.block.parameters())
        now = torch.get_rng_state()
        now_cuda = torch.cuda.get_rng_state(x.device) if x.is_cuda else None
        torch.set_rng_state(ctx.rng)
        if ctx.cuda_rng is not None:
            torch.cuda.set_rng_state(ctx.cuda_rng, x.device)
        try:
            with torch.enable_grad():
                leaf = x.detach().requires_grad_(True)
                out = ctx.block(leaf)
        finally:
            torch.set_rng_state(now)
            if now_cuda is not None:
                torch.cuda.set_rng_state(now_cuda, x.device)
        grad_x = None
        if ctx.needs_input_grad[1]:
            (grad_x,) = torch.autograd.grad(out, [leaf], grad_out, retain_graph=True)
        grad_w = torch.autograd.grad(out, weights, grad_out)
        return (None, grad_x, *grad_w)


def checkpointed_forward(layers, x, segments):
    blocks = list(layers)
    n = len(blocks)
    out = x
    begin = 0
    for j in range(segments):
        end = begin + n // segments + (1 if j < n % segments else 0)
        block = nn.Sequential(*blocks[begin:end])
        out = Checkpointed.apply(block, out, *block.parameters())
        begin = end
    return out
