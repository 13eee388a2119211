"""Unit 01's reference solutions: standard attention with its N×N intermediates, the memory model of one
call of it, and the longest sequence that fits a memory budget.

The model describes `utils.memory.attention_step`: one call of the course's standard attention
(`utils.naive_attention`, non-causal) on fresh Q, K, V of shape (batch, heads, n, d), created inside the
step; with `training`, then backward from a fresh dO. It lists the tensors alive at the peak, assuming
n ≥ 2·d (the N×N tensors dominate; below that the peak can move to another moment):

- inference, half precision: at the softmax, S, its float32 copy and the float32 softmax, beside Q, K, V;
- inference, float32: at O = P V, S and P (the softmax output itself: no copy), beside Q, K, V and O;
- training: at the softmax backward, the float32 P that softmax saved, dP and dS in float32, beside Q, K,
  V, O, dO and dV; on CUDA the softmax backward kernel also holds a float32 scratch buffer dP∘P.
"""

from __future__ import annotations

import torch

from utils.attention.naive import naive_attention


def standard_attention(Q, K, V, is_causal: bool = False):
    """(O, S, P) of softmax(Q Kᵀ/√d) V for (..., N, d) inputs, S and P in the input dtype (top-left causal)."""
    return naive_attention(Q, K, V, is_causal=is_causal, return_scores=True)


def attention_memory_bytes(batch, heads, n, d, dtype, training, device="cuda") -> dict[str, int]:
    """{tensor: bytes} of the tensors alive at the peak of `utils.memory.attention_step` (n ≥ 2·d)."""
    size = torch.empty((), dtype=dtype).element_size()
    softmax_size = torch.empty((), dtype=torch.promote_types(dtype, torch.float32)).element_size()
    scores, rows = batch * heads * n * n, batch * heads * n * d
    tensors = {"Q, K, V": 3 * rows * size}
    if training:
        tensors |= {"O": rows * size, "dO": rows * size, "dV": rows * size}
        tensors |= {name: scores * softmax_size for name in ("P (saved by softmax)", "dP", "dS")}
        if torch.device(device).type == "cuda":
            tensors["dP∘P (CUDA softmax backward scratch)"] = scores * softmax_size
    elif size == softmax_size:
        tensors |= {"S": scores * size, "P": scores * size, "O": rows * size}
    else:
        tensors |= {
            "S": scores * size,
            "S in float32": scores * softmax_size,
            "softmax(S)": scores * softmax_size,
        }
    return tensors


def max_sequence_length(memory_bytes, batch, heads, d, dtype, training, device="cuda") -> int:
    """The largest n whose modelled peak fits in `memory_bytes` (0 if not even n = 1 fits)."""

    def fits(n: int) -> bool:
        return (
            sum(attention_memory_bytes(batch, heads, n, d, dtype, training, device).values()) <= memory_bytes
        )

    if not fits(1):
        return 0
    low, high = 1, 2
    while fits(high):
        low, high = high, 2 * high
    while high - low > 1:  # fits(low) and not fits(high)
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low
