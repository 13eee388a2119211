# selftest-replaces: memory_model
# Variant: describes the tensors as (name, elements, dtype) records and converts them to bytes at the end.
# 变体：先把张量描述成 (名字, 元素个数, dtype) 记录，最后换算成字节。
from collections import namedtuple

Tensor = namedtuple("Tensor", "name elements dtype")


def attention_memory_bytes(batch, heads, n, d, dtype, training, device="cuda"):
    square, tall = batch * heads * n * n, batch * heads * n * d
    alive = [Tensor("Q", tall, dtype), Tensor("K", tall, dtype), Tensor("V", tall, dtype)]
    if training:
        alive += [Tensor("O", tall, dtype), Tensor("dO", tall, dtype), Tensor("dV", tall, dtype)]
        alive += [Tensor(name, square, torch.float32) for name in ("P32", "dP32", "dS32")]
        if device == "cuda":
            alive.append(Tensor("softmax backward scratch", square, torch.float32))
    elif dtype == torch.float32:
        alive += [Tensor("S", square, dtype), Tensor("P", square, dtype), Tensor("O", tall, dtype)]
    else:
        alive += [Tensor("S", square, dtype), Tensor("S32", square, torch.float32), Tensor("P32", square, torch.float32)]
    return {t.name: t.elements * t.dtype.itemsize for t in alive}
