"""Tile sizes and warps for the Triton kernels: the one place to tune them.

On a GPU, each launch tries configs in order: first the entry of the committed tuning table for this
GPU model (`tuned/<gpu>.json`, written by `python -m course tune`, keyed by kernel, head dim, element
size, causal or not and N bucket), then a fallback list, fastest first. A config is only launched if its
estimated shared-memory need fits the device (a laptop GPU has ~100 KB per block, an H100 ~228 KB);
`flash_triton` also falls back to the next candidate if the compiler still reports too little memory.
The interpreter gets small tiles, so CPU tests are fast and every tail and diagonal case is exercised
(tile sizes differ between Q and K on purpose).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import torch
import triton  # `course.reference` imported utils first, which chose GPU or interpreter


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

# Fallback order on a GPU without a tuned entry (best first; pruned by shared memory at run time), per
# element size. The 16-bit lists were chosen from the H100 tuning run (`tuned/`). The 32-bit lists are
# small tiles that fit any GPU; they are not tuned (float32 is for correctness, not speed, in this course).
_GPU_CANDIDATES = {
    16: {
        "forward": [
            KernelConfig(128, 64, 8, 3),
            KernelConfig(64, 64, 4, 3),
            KernelConfig(64, 32, 4, 2),
            KernelConfig(32, 32, 4, 1),
            KernelConfig(16, 16, 2, 1),
        ],
        "dkdv": [
            KernelConfig(64, 64, 4, 2),
            KernelConfig(32, 64, 4, 2),
            KernelConfig(32, 32, 4, 1),
            KernelConfig(16, 16, 2, 1),
        ],
        "dq": [
            KernelConfig(128, 64, 8, 3),
            KernelConfig(64, 32, 4, 2),
            KernelConfig(32, 32, 4, 1),
            KernelConfig(16, 16, 2, 1),
        ],
    },
    32: {
        "forward": [KernelConfig(64, 64, 4, 2), KernelConfig(64, 32, 4, 2), KernelConfig(32, 32, 4, 1)],
        "dkdv": [KernelConfig(32, 64, 4, 2), KernelConfig(32, 32, 4, 1), KernelConfig(16, 16, 2, 1)],
        "dq": [KernelConfig(64, 32, 4, 2), KernelConfig(32, 32, 4, 1), KernelConfig(16, 16, 2, 1)],
    },
}


def _grid(tiles, warps, stages) -> list[KernelConfig]:
    return [KernelConfig(q, k, w, s) for q, k in tiles for w in warps for s in stages]


# What `python -m course tune` tries for each kernel, per element size (float32 gets smaller tiles: twice
# the bytes per element, and each of its products is three TF32 products, see FP32_PRECISION).
SEARCH_SPACE = {
    16: {
        "forward": _grid([(128, 64), (128, 128), (64, 64)], (4, 8), (2, 3, 4)),
        "dkdv": _grid([(32, 128), (64, 128), (32, 64), (64, 64)], (4, 8), (2, 3)),
        "dq": _grid([(128, 32), (128, 64), (64, 64), (64, 32)], (4, 8), (2, 3)),
    },
    32: {
        "forward": _grid([(64, 32), (64, 64), (128, 32), (32, 32)], (4, 8), (2,)),
        "dkdv": _grid([(32, 64), (16, 64), (32, 32)], (4, 8), (2,)),
        "dq": _grid([(64, 32), (64, 16), (32, 32)], (4, 8), (2,)),
    },
}

# Tuned tables are looked up for these N: a tuned entry for bucket b serves every N up to b
# (and the last bucket every longer N). Short sequences have few tiles, so fewer, smaller programs win.
N_BUCKETS = (1024, 4096, 16384)
TUNED_DIR = Path(__file__).resolve().parent / "tuned"


def n_bucket(n: int) -> int:
    """The tuning bucket of sequence length `n` (the larger of Nq and Nk)."""
    return next((b for b in N_BUCKETS if n <= b), N_BUCKETS[-1])


def tuning_key(kernel: str, head_dim: int, dtype: torch.dtype, is_causal: bool, n: int) -> str:
    """The key of a tuned config, e.g. "forward/d128/16bit/causal/n<=4096".

    float16 and bfloat16 share entries: same element size, same tensor-core rate, same best tiles.
    """
    bits = torch.empty((), dtype=dtype).element_size() * 8
    mask = "causal" if is_causal else "full"
    return f"{kernel}/d{head_dim}/{bits}bit/{mask}/n<={n_bucket(n)}"


def device_slug(name: str) -> str:
    """A file name for a GPU, e.g. "NVIDIA H100 80GB HBM3" -> "nvidia_h100_80gb_hbm3"."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


@cache
def tuned_table(device_name: str) -> dict[str, KernelConfig]:
    """The committed tuning results for this GPU model ({} if it was never tuned)."""
    path = TUNED_DIR / f"{device_slug(device_name)}.json"
    if not path.exists():
        return {}
    entries = json.loads(path.read_text(encoding="utf-8"))["configs"]
    return {key: KernelConfig(**entry["config"]) for key, entry in entries.items()}


_INTERPRETER_CONFIGS = {
    "forward": KernelConfig(32, 16, 1, 1),
    "dkdv": KernelConfig(16, 32, 1, 1),
    "dq": KernelConfig(32, 16, 1, 1),
}

# Matrix-product precision for float32 inputs on a GPU. "tf32" rounds the inputs to 10 mantissa bits
# (~1e-3 relative error: too coarse for float32). "ieee" is true fp32 on CUDA cores; "tf32x3" splits each
# input into a big and a small TF32 part and sums three tensor-core products, which keeps fp32-level
# error. Measured on an H100 (causal forward, N = 4096): ieee 12.5 / 0.8 TFLOP/s at d = 64 / 128 (d = 128
# spills registers), tf32x3 31 / 24 TFLOP/s; max error / max|O| 2.2e-7 / 3.5e-7 (ieee) vs 3.0e-7 / 4.6e-7.
# Half types ignore this setting.
FP32_PRECISION = "tf32x3"

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


@cache
def device_name(device_index: int) -> str:
    return torch.cuda.get_device_name(device_index)


def fitting(
    kernel: str, candidates: list[KernelConfig], head_dim: int, element_size: int, device_index: int
) -> list[KernelConfig]:
    """The candidates whose shared-memory estimate fits the GPU, in their order."""
    budget = max_shared_memory(device_index)
    return [c for c in candidates if shared_memory_estimate(kernel, c, head_dim, element_size) <= budget]


def candidate_configs(
    kernel: str,
    head_dim: int,
    dtype: torch.dtype,
    device: torch.device,
    is_causal: bool = False,
    n: int = N_BUCKETS[-1],
) -> list[KernelConfig]:
    """Configs to try for `kernel`, best first: the tuned one for this GPU and key (if any), then the
    fallbacks; on a GPU only those whose shared-memory estimate fits."""
    if device.type != "cuda":
        return [_INTERPRETER_CONFIGS[kernel]]
    index = device.index if device.index is not None else torch.cuda.current_device()
    element_size = torch.empty((), dtype=dtype).element_size()
    tuned = tuned_table(device_name(index)).get(tuning_key(kernel, head_dim, dtype, is_causal, n))
    fallbacks = _GPU_CANDIDATES[element_size * 8][kernel]
    ordered = list(dict.fromkeys([tuned, *fallbacks] if tuned else fallbacks))
    return fitting(kernel, ordered, head_dim, element_size, index)
