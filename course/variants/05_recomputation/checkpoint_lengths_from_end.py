# selftest-replaces: rc_checkpoint
# Variant: computes the segment lengths with numpy-free integer arithmetic from the end, and keeps the random states in a small dataclass. / 变体：从末尾用整数运算算出各段长度，随机状态放在一个小 dataclass 里。
import dataclasses


@dataclasses.dataclass
class RandomState:
    cpu: torch.Tensor
    cuda: object
    device: object

    @classmethod
    def capture(cls, device):
        return cls(torch.get_rng_state(), torch.cuda.get_rng_state(device) if device.type == "cuda" else None, device)

    def devices(self):
        return [self.device] if self.cuda is not None else []

    def apply(self):
        torch.set_rng_state(self.cpu)
        if self.cuda is not None:
            torch.cuda.set_rng_state(self.cuda, self.device)


class Segment(torch.autograd.Function):
    @staticmethod
    def forward(ctx, layers, x, *params):
        ctx.layers, ctx.state = layers, RandomState.capture(x.device)
        ctx.save_for_backward(x)
        for layer in layers:
            x = layer(x)
        return x

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        params = [p for layer in ctx.layers for p in layer.parameters()]
        with torch.random.fork_rng(devices=ctx.state.devices()):
            ctx.state.apply()
            with torch.enable_grad():
                x = x.detach().requires_grad_(ctx.needs_input_grad[1])
                y = x
                for layer in ctx.layers:
                    y = layer(y)
        targets = [x, *params] if x.requires_grad else params
        grads = torch.autograd.grad(y, targets, grad_out)
        if x.requires_grad:
            return (None, *grads)
        return (None, None, *grads)


def checkpointed_forward(layers, x, segments):
    layers = list(layers)
    lengths = []
    remaining = len(layers)
    for left in range(segments, 0, -1):
        lengths.append(remaining // left)
        remaining -= lengths[-1]
    start = 0
    for length in lengths:
        part = layers[start : start + length]
        x = Segment.apply(part, x, *[p for layer in part for p in layer.parameters()])
        start += length
    return x
