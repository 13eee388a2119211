"""Triton's cache in a sandbox, in two layers: the course's own kernels, compiled once by the grader, under the
grading's own (issue 50, compile once).

The grader names the read-only layer in `REFERENCE_ENV` and this class in `TRITON_CACHE_MANAGER`
(`course.judge.sandbox.child_env`). Triton asks its cache manager for a kernel's files by the kernel's key: the
reference layer answers first, so an entry a student's code plants under one of its keys in the writable layer
(`TRITON_CACHE_DIR`) is never read; whatever Triton compiles is written to the writable layer. The reference layer
is mounted read-only and is the grader's own folder (`course.judge.triton_reference`): nothing a sandbox writes
reaches it. This class is a convenience, not the boundary: a student's process may load another manager, and only
loads its own planted files then.
"""

from __future__ import annotations

import os

from triton.runtime.cache import FileCacheManager

REFERENCE_ENV = "FLASH_COURSE_TRITON_REFERENCE"
MANAGER = "utils.judged.triton_cache:Layered"


class Layered(FileCacheManager):
    """Triton's file cache over a read-only reference layer that is read first."""

    def __init__(self, key, override=False, dump=False):
        super().__init__(key, override=override, dump=dump)
        found = os.environ.get(REFERENCE_ENV)
        self.reference = os.path.join(found, key) if found and not (override or dump) else None

    def get_file(self, filename) -> str | None:
        if self.reference is not None and os.path.isfile(path := os.path.join(self.reference, filename)):
            return path
        return super().get_file(filename)

    def get_group(self, filename: str) -> dict[str, str] | None:
        """The files of a compiled kernel: all from the reference layer where it holds the kernel (its group
        names only its own files), else from the writable one."""
        if self.reference is not None and os.path.isfile(os.path.join(self.reference, f"__grp__{filename}")):
            found = FileCacheManager.__new__(FileCacheManager)
            found.key, found.cache_dir, found.lock_path = self.key, self.reference, None
            group = found.get_group(filename)
            if group is not None and all(os.path.dirname(path) == self.reference for path in group.values()):
                return group
            return None  # a broken reference entry: compiled again into the writable layer
        return super().get_group(filename)


def warm(device: str = "cuda", lengths: tuple[int, ...] = (128, 100)) -> tuple[int, int]:
    """Call the course's `utils` kernels as the notebooks do (their tiles, both float dtypes, sequence `lengths`
    divisible by 16 and not, which Triton compiles apart) on `device`: what the grader compiles once into the
    reference layer. (calls that ran, calls made); a tile too large for the device's shared memory is left out,
    any other error is raised."""
    import torch
    from triton.runtime.errors import OutOfResources

    from utils import io_kernels, softmax_kernels, tiling

    ran, made = 0, 0

    def attempt(function, *args, **keywords) -> None:
        nonlocal ran, made
        made += 1
        try:
            function(*args, **keywords)
            ran += 1
        except OutOfResources:  # compiled, if ever, by the grading that asks for it
            pass

    def randn(*shape, dtype):
        return torch.randn(*shape, device=device, dtype=dtype)

    for dtype in (torch.float16, torch.float32):
        for n in lengths:
            vector, scores = randn(n * 64, dtype=dtype), randn(2, n, n, dtype=dtype)
            q, k, v = (randn(2, n, 64, dtype=dtype) for _ in range(3))
            a, b = (randn(n, n, dtype=dtype) for _ in range(2))
            attempt(io_kernels.copy, vector)
            attempt(io_kernels.repeat, vector, 4)
            for causal in (False, True):
                for fused in (False, True):
                    attempt(io_kernels.scale_mask_softmax, scores, 0.125, causal, fused=fused)
            for block in (16, 32, 64, 128):
                attempt(io_kernels.standard_attention, q, k, v, block_q=block)
                attempt(io_kernels.fused_attention, q, k, v, block_q=block)
                attempt(tiling.three_pass_attention, q, k, v, block_k=block)
                attempt(tiling.blocked_matmul, a, b, block, block, block)
            for method in softmax_kernels.KERNELS:
                attempt(softmax_kernels.row_softmax, randn(64, n * 8, dtype=dtype), method)
    return ran, made


if __name__ == "__main__":
    print(warm())
