"""Graded checks of unit 07 (Triton basics), run in a child process by `utils.isolation.run_check`.

Each check takes the exported student module and a `hidden` flag (visible self-check: one small
case; hidden: fresh random inputs on odd shapes, both dtypes). Interfaces the notebook fixes:
  - `weighted_sum_forward(x, weight) -> y`, y = Σ_d x[..., d]·weight[d], for x (..., D), weight (D,);
  - `WeightedSum.apply(x, weight)`, whose backward calls `weighted_sum_backward(grad_y, x, weight)`;
  - `softmax_rows(x, block_c)`: softmax of each row of a 2-D x, in column tiles of width block_c.
Tolerances are relative to the size of the result: a sum of D products of N(0, 1) numbers is about
√D in size, so the absolute tolerance grows with √D; fp16 results also carry fp16 rounding (2⁻¹¹).
"""

from __future__ import annotations

import torch

from utils.grading import assert_close
from utils.messages import bilingual
from utils.runtime import device
from utils.triton_checks import MATMUL_OPS, count_launches, forbid_torch_ops, require_launches

_TOL = {torch.float32: 1e-5, torch.float16: 2e-3}
_DTYPES = (torch.float32, torch.float16)

# (leading dims, D): one row, odd row counts, 3-D input, D below / above / not a multiple of a tile
_WS_VISIBLE = [((8,), 32)]
_WS_HIDDEN = [((1,), 1), ((37,), 7), ((3, 5), 64), ((129,), 129), ((2, 33), 300)]
# (rows, columns, block_c, transposed input): rows shorter and longer than one tile, strided rows
_SM_VISIBLE = [(4, 100, 32, False)]
_SM_HIDDEN = [(1, 1, 16, False), (3, 5, 16, False), (17, 129, 32, False), (5, 1000, 64, False)]
_SM_HIDDEN += [(33, 70, 16, True), (2, 2049, 128, False)]


def _random(*shape, dtype):
    return torch.randn(*shape, device=device(), dtype=torch.float32).to(dtype)


def _check_dtype(result, dtype, what):
    if result.dtype != dtype:
        raise AssertionError(
            bilingual(
                f"{what} 的数据类型应为 {dtype}，得到 {result.dtype}",
                f"{what} should have dtype {dtype}, got {result.dtype}",
            )
        )


def _report(n_cases: int, hidden: bool) -> str:
    kind = bilingual("隐藏测试", "hidden tests") if hidden else bilingual("自检", "self-check")
    line = bilingual(f"通过：{n_cases} 个用例", f"passed: {n_cases} cases")
    print(f"{kind}: {line}")
    return line


def weighted_sum_forward(module, hidden: bool = False) -> str:
    """y = weighted_sum_forward(x, w) against float64, computed by the student's kernel."""
    cases = (
        [(lead, d, t) for lead, d in _WS_HIDDEN for t in _DTYPES]
        if hidden
        else [(*_WS_VISIBLE[0], torch.float32)]
    )
    for lead, d, dtype in cases:
        what = bilingual(
            f"加权和前向（x {(*lead, d)}, {dtype}）", f"weighted-sum forward (x {(*lead, d)}, {dtype})"
        )
        x, weight = _random(*lead, d, dtype=dtype), _random(d, dtype=dtype)
        with count_launches(module) as launches, forbid_torch_ops((*MATMUL_OPS, "mul", "sum"), what):
            y = module.weighted_sum_forward(x, weight)
        require_launches(launches, what)
        expected = x.double() @ weight.double()
        assert_close(y, expected, what, atol=_TOL[dtype] * 10 * d**0.5, rtol=_TOL[dtype] * 5)
        _check_dtype(y, dtype, what)
    return _report(len(cases), hidden)


def weighted_sum_backward(module, hidden: bool = False) -> str:
    """Gradients of WeightedSum.apply(x, w) against float64, computed by the student's kernels."""
    cases = (
        [(lead, d, t) for lead, d in _WS_HIDDEN for t in _DTYPES]
        if hidden
        else [(*_WS_VISIBLE[0], torch.float32)]
    )
    for lead, d, dtype in cases:
        what = bilingual(
            f"加权和反向（x {(*lead, d)}, {dtype}）", f"weighted-sum backward (x {(*lead, d)}, {dtype})"
        )
        x = _random(*lead, d, dtype=dtype).requires_grad_(True)
        weight = _random(d, dtype=dtype).requires_grad_(True)
        grad_y = _random(*lead, dtype=dtype)
        # The partial sums of grad_w may be added up with torch (a small tensor), so "sum" is allowed.
        with count_launches(module) as launches, forbid_torch_ops((*MATMUL_OPS, "mul"), what):
            module.WeightedSum.apply(x, weight).backward(grad_y)
        require_launches(launches, what)
        g, x64, w64 = grad_y.double(), x.detach().double(), weight.detach().double()
        rows = g.numel()
        assert_close(
            x.grad, g[..., None] * w64, what + " grad_x", atol=_TOL[dtype] * 10, rtol=_TOL[dtype] * 5
        )
        expected_w = (g[..., None] * x64).reshape(rows, d).sum(0)
        assert_close(
            weight.grad, expected_w, what + " grad_w", atol=_TOL[dtype] * 10 * rows**0.5, rtol=_TOL[dtype] * 5
        )
        _check_dtype(x.grad, dtype, what + " grad_x")
        _check_dtype(weight.grad, dtype, what + " grad_w")
    return _report(len(cases), hidden)


def softmax_rows(module, hidden: bool = False) -> str:
    """softmax_rows(x, block_c) against float64 on rows longer than one tile, with large offsets."""
    cases = [(*c, t) for c in _SM_HIDDEN for t in _DTYPES] if hidden else [(*_SM_VISIBLE[0], torch.float32)]
    for rows, cols, block_c, transposed, dtype in cases:
        what = bilingual(
            f"分块行 softmax（x ({rows}, {cols}), block_c={block_c}, {dtype}）",
            f"tiled row softmax (x ({rows}, {cols}), block_c={block_c}, {dtype})",
        )
        # Large positive scores (around 100) overflow exp() unless the row maximum is subtracted.
        shape = (cols, rows) if transposed else (rows, cols)
        x = (_random(*shape, dtype=torch.float32) * 5 + 100).to(dtype)
        x = x.T if transposed else x
        forbidden = ("exp", "_softmax", "softmax", "logsumexp", "amax", "max", "sum", "div")
        with count_launches(module) as launches, forbid_torch_ops(forbidden, what):
            y = module.softmax_rows(x, block_c)
        require_launches(launches, what)
        assert_close(y, torch.softmax(x.double(), dim=-1), what, atol=_TOL[dtype] * 10, rtol=_TOL[dtype] * 20)
        _check_dtype(y, dtype, what)
    return _report(len(cases), hidden)


__all__ = ["softmax_rows", "weighted_sum_backward", "weighted_sum_forward"]
