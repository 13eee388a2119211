"""Kernels for tests/test_traffic.py's simulated GPU machine: run as a script it counts them as a GPU machine
does (Triton in compile mode, the count in an interpreter child process) and writes what it got."""

import torch
import triton
import triton.language as tl


@triton.jit
def scaled(x, scale):
    return x * scale


@triton.jit
def softmax_rows_kernel(X, Y, M, n_cols, stride, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(Y + row * n_cols + cols, scaled(e / tl.sum(e, 0), scale), mask=cols < n_cols)
    tl.store(M + row, x.max() + e.sum())  # tensor member methods are library jit functions too


def inputs():
    torch.manual_seed(0)
    x = torch.randn(5, 48)[:, :37]  # a strided view
    return x, torch.empty(5, 37), torch.empty(5), 37, 48, 0.5


def counted(kernel):
    from utils.traffic import count_traffic

    args = inputs()
    traffic = count_traffic(kernel, (5,), *args, BLOCK=64)
    return args, traffic


if __name__ == "__main__":
    import json
    import os
    import sys
    from pathlib import Path

    from triton.runtime.jit import JITFunction

    import utils
    from utils.judged import tensor_files

    assert not utils.interpreter() and "TRITON_INTERPRET" not in os.environ
    import gpu_sim_kernels  # the importable copy; this script's own kernel is like a notebook's

    out = Path(sys.argv[1])
    results = {}
    for where, kernel in (("module", gpu_sim_kernels.softmax_rows_kernel), ("main", softmax_rows_kernel)):
        assert isinstance(kernel, JITFunction) and isinstance(tl.sum, JITFunction), (kernel, tl.sum)
        (x, y, m, *_), traffic = counted(kernel)
        maps = {
            f"{name}{w}": torch.from_numpy(traffic.maps[name][w]) for name in traffic.maps for w in (0, 1)
        }
        tensor_files.save({"Y": y, "M": m, **maps}, out / where)
        programs = {str(pid): dict(per) for pid, per in traffic.programs.items()}
        results[where] = {"bytes": traffic.bytes, "outside": traffic.outside, "programs": programs}
    (out / "results.json").write_text(json.dumps(results))
