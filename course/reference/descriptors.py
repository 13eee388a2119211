"""What unit 10's forward and backward kernels share: host-side tensor descriptors over (BH, N, d) tensors, the
autotuning hooks that fit them to a config's tiles, and a launch that autotunes or forces one config."""

from __future__ import annotations

import torch
import triton

from utils import hopper


def descriptor(t: torch.Tensor, rows: int):
    """A host-side descriptor over the (BH, N, d) tensor `t`, one block = [1, rows, d] (reset by autotuning)."""
    return hopper.tensor_descriptor_class()(t, list(t.shape), list(t.stride()), [1, rows, t.shape[-1]])


def block_shape_hook(tiles: dict[str, tuple[str, ...]]):
    """An autotuning pre-hook: each descriptor named in `tiles[tile]` gets the block [1, config's `tile`, d]."""

    def set_block_shapes(nargs) -> None:
        for tile, names in tiles.items():
            for name in names:
                nargs[name].block_shape = [1, nargs[tile], nargs["HEAD_DIM"]]

    return set_block_shapes


def float32_pruner(float32_configs: list[triton.Config]):
    """An early-prune function: `float32_configs` for float32 inputs (the kernel's `q_desc`), the others for
    16-bit ones."""

    def prune(configs, named_args, **kwargs):
        for_float32 = named_args["q_desc"].base.element_size() == 4
        kept = [c for c in configs if (c in float32_configs) == for_float32]
        return kept or configs

    return prune


def launch(kernel, grid, args, constexprs, descriptors, config: triton.Config | None):
    """Run the autotuned `kernel`, or, given `config`, exactly that config (its pre-hook sizes `descriptors`);
    returns the compiled kernel (registers, spills, shared memory; None in the interpreter)."""
    if config is None:
        return kernel[grid](*args, **constexprs)
    config.pre_hook({**descriptors, **constexprs, **config.kwargs})
    return kernel.fn[grid](
        *args, **constexprs, **config.kwargs, num_warps=config.num_warps, num_stages=config.num_stages
    )
