# selftest-replaces: rc_checkpoint
# Variant: the non-reentrant design with saved-tensor hooks: each segment runs on the graph, pack keeps only a number, and the first unpack recomputes the whole segment (same random state) and hands out its saved tensors. / 变体：用 saved-tensor hooks 的非可重入做法：每段正常接入计算图，pack 只留一个编号，第一次 unpack 时重计算整段（相同的随机状态）并交出它保存的张量。
def run_segment(part, start):
    cpu_state = torch.get_rng_state()
    cuda_state = torch.cuda.get_rng_state(start.device) if start.is_cuda else None
    recomputed = []
    count = [0]

    def pack(tensor):
        count[0] += 1
        return count[0] - 1

    def unpack(index):
        if not recomputed:
            with torch.random.fork_rng(devices=[start.device] if start.is_cuda else []):
                torch.set_rng_state(cpu_state)
                if cuda_state is not None:
                    torch.cuda.set_rng_state(cuda_state, start.device)
                grab = torch.autograd.graph.saved_tensors_hooks(
                    lambda t: recomputed.append(t.detach()) or len(recomputed) - 1, lambda i: recomputed[i]
                )
                with torch.enable_grad(), grab:
                    h = start.detach().requires_grad_(start.requires_grad)
                    for layer in part:
                        h = layer(h)
        return recomputed[index]

    out = start
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        for layer in part:
            out = layer(out)
    return out


def checkpointed_forward(layers, x, segments):
    layers = list(layers)
    n = len(layers)
    cuts = [j * n // segments for j in range(segments + 1)]
    for start, stop in zip(cuts[:-1], cuts[1:]):
        x = run_segment(layers[start:stop], x)
    return x
