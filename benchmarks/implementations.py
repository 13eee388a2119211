"""The attention implementations the suite compares: each maps (Q, K, V, is_causal) to O, differentiably.

Inputs are (B, H, N, d). An implementation that cannot run here (a backend missing on this device,
or a size it is deliberately not run at) raises `Unavailable` with the reason, which is recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import utils
from course import reference

# Messages PyTorch uses when no kernel of the requested SDPA backend can run the inputs.
_NO_KERNEL = ("No viable backend", "No available kernel")


class Unavailable(Exception):
    """This implementation cannot run for these inputs on this device; the message says why."""


@dataclass(frozen=True)
class Implementation:
    name: str
    description: str
    run: Callable[[torch.Tensor, torch.Tensor, torch.Tensor, bool], torch.Tensor]
    gpu_max_n: int | None = None  # on a GPU, not run above this N (too slow to be worth timing)


def _sdpa(backend: SDPBackend):
    def run(q, k, v, is_causal):
        with sdpa_kernel(backend):
            try:
                return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
            except RuntimeError as error:
                if any(text in str(error) for text in _NO_KERNEL):
                    raise Unavailable(
                        f"SDPA backend {backend.name} has no kernel for {q.dtype}, d={q.shape[-1]} "
                        f"on {utils.mode().name}"
                    ) from error
                raise

    return run


def _course(backend: str):
    def run(q, k, v, is_causal):
        return reference.flash_attention(q, k, v, is_causal=is_causal, backend=backend)

    return run


def _hopper(q, k, v, is_causal):
    from course.reference.hopper import hopper_attention

    return hopper_attention(q, k, v, is_causal)


IMPLEMENTATIONS = {
    impl.name: impl
    for impl in (
        Implementation("triton", "the course's FlashAttention-2 Triton kernels", _course("triton")),
        Implementation(
            "hopper",
            "the course's Hopper forward (tensor descriptors + persistent grid) with the unit-08 backward; "
            "the unit-08 kernels where TMA or sm90 is missing, or d is not 64/128",
            _hopper,
        ),
        Implementation("sdpa_flash", "torch SDPA, FlashAttention backend", _sdpa(SDPBackend.FLASH_ATTENTION)),
        Implementation("sdpa_cudnn", "torch SDPA, cuDNN backend", _sdpa(SDPBackend.CUDNN_ATTENTION)),
        Implementation(
            "naive", "materialises the N×N scores (runs until it is out of memory)", _course("naive")
        ),
        Implementation(
            "pytorch",
            "the course's tiled PyTorch FlashAttention (Python loop over tiles)",
            _course("pytorch"),
            2048,
        ),
    )
}

BASELINES = ("sdpa_flash", "sdpa_cudnn")  # every record carries its speed ratio to these


def call(impl: Implementation, q, k, v, is_causal: bool) -> torch.Tensor:
    """Run `impl`, raising `Unavailable` where it is not run (see `Implementation.gpu_max_n`)."""
    n = max(q.shape[-2], k.shape[-2])
    if impl.gpu_max_n is not None and utils.mode().is_gpu and n > impl.gpu_max_n:
        raise Unavailable(f"not run above N={impl.gpu_max_n} on a GPU: {impl.description}")
    return impl.run(q, k, v, is_causal)
