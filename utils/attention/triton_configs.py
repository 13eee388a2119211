"""Tile sizes and warps for the Triton kernels: the one place to tune them (issue 7 does).

Each kernel has an ordered list of candidate configs, fastest first. A config is only launched if its
estimated shared-memory need fits the device (a laptop GPU has ~100 KB per block, an H100 ~228 KB);
`flash_triton` also falls back to the next candidate if the compiler still reports too little memory.
The interpreter gets small tiles, so CPU tests are fast and every tail and diagonal case is exercised
(tile sizes differ between Q and K on purpose).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import torch
import triton  # `utils/__init__.py` has already chosen GPU or interpreter: parents import first


@dataclass(frozen=True)
class KernelConfig:
    block_q: int
    block_k: int
    num_warps: int
    num_stages: int


# Per kernel: which tiles stay resident for the whole program and which are streamed (and pipelined).
#   forward:  Q resident; K, V streamed.      dkdv: K, V resident; Q, dO streamed.
#   dq:       Q, dO resident; K, V streamed.
_LAYOUT = {"forward": ("q", 1, 2), "dq": ("q", 2, 2), "dkdv": ("k", 2, 2)}

_GPU_CANDIDATES = {
    "forward": [
        KernelConfig(128, 64, 4, 3),
        KernelConfig(128, 32, 4, 3),
        KernelConfig(64, 64, 4, 2),
        KernelConfig(64, 32, 4, 2),
        KernelConfig(32, 32, 4, 1),
        KernelConfig(16, 16, 2, 1),
    ],
    "dkdv": [
        KernelConfig(32, 128, 8, 3),
        KernelConfig(32, 64, 4, 3),
        KernelConfig(32, 64, 4, 2),
        KernelConfig(32, 32, 4, 1),
        KernelConfig(16, 16, 2, 1),
    ],
    "dq": [
        KernelConfig(128, 32, 8, 3),
        KernelConfig(64, 32, 4, 3),
        KernelConfig(64, 32, 4, 2),
        KernelConfig(32, 32, 4, 1),
        KernelConfig(16, 16, 2, 1),
    ],
}

_INTERPRETER_CONFIGS = {
    "forward": KernelConfig(32, 16, 1, 1),
    "dkdv": KernelConfig(16, 32, 1, 1),
    "dq": KernelConfig(32, 16, 1, 1),
}

# Matrix-product precision for float32 inputs on a GPU: "ieee" is true fp32; "tf32" is several times
# faster but rounds the inputs to 10 mantissa bits (~1e-3 relative error). Half types ignore it.
FP32_PRECISION = "ieee"

PREPROCESS_BLOCK = 64  # rows per program of the Δ = rowsum(dO ∘ O) kernel


def shared_memory_estimate(kernel: str, config: KernelConfig, head_dim: int, element_size: int) -> int:
    """Bytes of shared memory a config needs (a deliberately generous estimate).

    Resident tiles once, streamed tiles once per pipeline stage, plus one score tile for the
    layout change between the two matrix products.
    """
    resident_side, resident_tiles, streamed_tiles = _LAYOUT[kernel]
    resident_rows, streamed_rows = (
        (config.block_q, config.block_k) if resident_side == "q" else (config.block_k, config.block_q)
    )
    tiles = (
        resident_tiles * resident_rows * head_dim
        + config.num_stages * streamed_tiles * streamed_rows * head_dim
    )
    scores = config.block_q * config.block_k
    return element_size * (tiles + scores)


@cache
def max_shared_memory(device_index: int) -> int:
    """Shared memory per block that a kernel may use on this GPU, in bytes."""
    return triton.runtime.driver.active.utils.get_device_properties(device_index)["max_shared_mem"]


def candidate_configs(
    kernel: str, head_dim: int, dtype: torch.dtype, device: torch.device
) -> list[KernelConfig]:
    """Configs to try for `kernel`, best first; on a GPU only those whose estimate fits shared memory."""
    if device.type != "cuda":
        return [_INTERPRETER_CONFIGS[kernel]]
    budget = max_shared_memory(device.index if device.index is not None else torch.cuda.current_device())
    element_size = torch.empty((), dtype=dtype).element_size()
    return [
        config
        for config in _GPU_CANDIDATES[kernel]
        if shared_memory_estimate(kernel, config, head_dim, element_size) <= budget
    ]
