# selftest-replaces: memory_model
# Variant: replays the step as a timeline of allocations and releases and reports the tensors alive at its maximum.
# 变体：把整个步骤重放成一条分配与释放的时间线，报告最大值时刻存活的张量。
def attention_memory_bytes(batch, heads, n, d, dtype, training, device="cuda"):
    s, f = dtype.itemsize, max(dtype.itemsize, 4)
    nn, nd = batch * heads * n * n, batch * heads * n * d
    copies = s != f  # .to() copies only when the dtype changes
    events = [("+", "Q", nd * s), ("+", "K", nd * s), ("+", "V", nd * s), ("+", "QK", nn * s), ("+", "S", nn * s), ("-", "QK", 0)]
    if copies:
        events += [("+", "S32", nn * f), ("+", "P32", nn * f), ("-", "S32", 0), ("+", "P", nn * s)]
    else:
        events += [("+", "P32", nn * f)]
    if not training:
        events += [("-", "P32", 0)] if copies else []
        events += [("+", "O", nd * s)]
    else:
        events += [("+", "O", nd * s), ("-", "S", 0), ("+", "dO", nd * s), ("+", "dV", nd * s), ("+", "dP", nn * s)]
        if copies:
            events += [("-", "P", 0), ("+", "dP32", nn * f), ("-", "dP", 0)]
        events += [("+", "dS32", nn * f)]
        if str(device).startswith("cuda"):
            events += [("+", "dP∘P scratch", nn * f)]
    alive, best = {}, {}
    for sign, name, size in events:
        if sign == "+":
            alive[name] = size
        else:
            alive.pop(name)
        if sum(alive.values()) > sum(best.values()):
            best = dict(alive)
    return best
