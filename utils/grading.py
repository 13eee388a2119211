"""Helpers for self-checks and hidden tests: float64 references, bilingual assertions, contract checks.

Every failure raises AssertionError whose message names the property that failed, in both languages,
so nbgrader's feedback tells the student what to fix.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from utils import runtime
from utils.attention.validate import causal_mask, default_scale
from utils.checks.guarded import UNWRITTEN, unwritten
from utils.messages import bilingual

REFERENCE_ROWS = 1024  # query rows per block: a float64 reference never holds more than this many × Nk scores


def _blocks(q, k, is_causal: bool, scale: float) -> Iterator[tuple[slice, torch.Tensor]]:
    """(rows, P's float64 scaled scores for those query rows, causal mask applied), block by block."""
    n_q, n_k = q.shape[-2], k.shape[-2]
    for start in range(0, n_q, REFERENCE_ROWS):
        rows = slice(start, min(start + REFERENCE_ROWS, n_q))
        s = q[..., rows, :] @ k.transpose(-2, -1) * scale
        if is_causal:
            s = s.masked_fill(~causal_mask(rows.stop - start, n_k, q.device, first_row=start), float("-inf"))
        yield rows, s


def _float64_on_reference_device(*tensors: torch.Tensor) -> list[torch.Tensor]:
    """The tensors in float64, on the GPU when this is a GPU run: at N = 16384 a CPU reference takes seconds
    and gigabytes (many times over when a class is graded at once), a GPU milliseconds."""
    where = runtime.device() if runtime.mode().is_gpu else tensors[0].device
    return [t.detach().to(where, torch.float64) for t in tensors]


def reference_attention(q, k, v, is_causal: bool = False, scale: float | None = None):
    """Float64 reference: returns (O, L) with L the row-wise log-sum-exp of the scaled scores (on the inputs'
    device; computed REFERENCE_ROWS query rows at a time)."""
    q64, k64, v64 = _float64_on_reference_device(q, k, v)
    out, lse = q64.new_empty((*q64.shape[:-1], v64.shape[-1])), q64.new_empty(q64.shape[:-1])
    for rows, s in _blocks(q64, k64, is_causal, default_scale(q, scale)):
        lse[..., rows] = torch.logsumexp(s, dim=-1)
        out[..., rows, :] = torch.exp(s - lse[..., rows, None]) @ v64
    return out.to(q.device), lse.to(q.device)


def reference_gradients(q, k, v, grad_out, is_causal: bool = False, scale: float | None = None):
    """Float64 (dQ, dK, dV) of the reference attention for the upstream gradient `grad_out`, in closed form
    (dV = Pᵀ dO, dS = P ∘ (dO Vᵀ − Δ), dQ = σ dS K, dK = σ dSᵀ Q), REFERENCE_ROWS query rows at a time."""
    scale = default_scale(q, scale)
    q64, k64, v64, do64 = _float64_on_reference_device(q, k, v, grad_out.expand(*q.shape[:-1], v.shape[-1]))
    out, lse = reference_attention(q64, k64, v64, is_causal, scale)
    delta = (do64 * out).sum(-1)
    dq, dk, dv = torch.empty_like(q64), torch.zeros_like(k64), torch.zeros_like(v64)
    for rows, s in _blocks(q64, k64, is_causal, scale):
        p = torch.exp(s - lse[..., rows, None])
        dv += p.transpose(-2, -1) @ do64[..., rows, :]
        ds = p * (do64[..., rows, :] @ v64.transpose(-2, -1) - delta[..., rows, None])
        dq[..., rows, :] = ds @ k64 * scale
        dk += ds.transpose(-2, -1) @ q64[..., rows, :] * scale
    return tuple(t.to(q.device) for t in (dq, dk, dv))


def row_errors(out: torch.Tensor, exact: torch.Tensor) -> torch.Tensor:
    """‖out − exact‖ / ‖exact‖ of each row (norms over the last dimension), in float64."""
    exact = exact.double()
    return (out.double() - exact).norm(dim=-1) / exact.norm(dim=-1)


def assert_close(actual, expected, what: str, atol: float, rtol: float) -> None:
    """Shape and values of `actual` against a (float64) reference, with a bilingual message on failure."""
    if not isinstance(actual, torch.Tensor):
        raise AssertionError(
            bilingual(
                f"{what} 应为 torch.Tensor，得到 {type(actual).__name__}",
                f"{what} should be a torch.Tensor, got {type(actual).__name__}",
            )
        )
    if tuple(actual.shape) != tuple(expected.shape):
        raise AssertionError(
            bilingual(
                f"{what} 形状错误：{tuple(actual.shape)}，应为 {tuple(expected.shape)}",
                f"{what} has shape {tuple(actual.shape)}, expected {tuple(expected.shape)}",
            )
        )
    never_stored = unwritten(actual)
    if never_stored.any():
        count, first = int(never_stored.sum()), _first_index(never_stored)
        raise AssertionError(
            bilingual(
                f"{what} 有 {count} / {actual.numel()} 个元素从未被写入（仍是填充值 {UNWRITTEN:g}），"
                f"第一个在位置 {first}：缺少 store、掩码挡住了它，或程序个数不够",
                f"{what}: {count} of {actual.numel()} elements were never written (they still hold the fill "
                f"value {UNWRITTEN:g}), the first at index {first}: a store is missing or masked off, "
                "or the grid has too few programs",
            )
        )
    got = actual.detach().to(device=expected.device, dtype=torch.float64)
    not_finite = ~torch.isfinite(got)
    if not_finite.any():
        count, first = int(not_finite.sum()), _first_index(not_finite)
        raise AssertionError(
            bilingual(
                f"{what} 有 {count} 个元素是 NaN 或 Inf，第一个在位置 {first}",
                f"{what} has {count} NaN or Inf element(s), the first at index {first}",
            )
        )
    err = (got - expected).abs()
    bound = atol + rtol * expected.abs()
    if (err > bound).any():
        worst = tuple(int(i) for i in torch.unravel_index(torch.argmax(err - bound), err.shape))
        tolerance = f"atol={atol:.2g}, rtol={rtol:.2g}"
        raise AssertionError(
            bilingual(
                f"{what} 与 float64 参考不符：最大误差 {err.max().item():.2g}（容差 {tolerance}），位置 {worst}",
                f"{what} does not match the float64 reference: max error {err.max().item():.2g} "
                f"({tolerance}), at index {worst}",
            )
        )


def _first_index(mask: torch.Tensor) -> tuple[int, ...]:
    """The index (one int per dimension) of the first True element of `mask`."""
    flat = int(torch.argmax(mask.reshape(-1).to(torch.uint8)))
    return tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), mask.shape))


def saved_tensors(output: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The tensors an autograd Function saved for backward (read from the output's grad_fn)."""
    if output.grad_fn is None:
        raise AssertionError(
            bilingual(
                "输出没有 grad_fn：输入需要 requires_grad=True，且必须经过 autograd Function",
                "output has no grad_fn: inputs need requires_grad=True and must go "
                "through the autograd Function",
            )
        )
    return tuple(output.grad_fn.saved_tensors)


def check_saved_contract(output, q, k, v) -> None:
    """The FlashAttention contract: exactly Q, K, V, O and one float32 L of shape (..., Nq) are saved."""
    check_saved(saved_tensors(output), q, k, v, output)


def check_saved(saved, q, k, v, output) -> torch.Tensor:
    """`check_saved_contract` on the tensors an autograd Function saved; returns the saved L."""
    if not all(isinstance(t, torch.Tensor) for t in saved):
        raise AssertionError(bilingual("保存的对象不全是张量", "not everything saved is a tensor"))
    lse_shape = tuple(q.shape[:-1])
    if len(saved) != 5:
        raise AssertionError(
            bilingual(
                f"应保存 5 个张量 (Q, K, V, O, L)，实际保存了 {len(saved)} 个",
                f"expected 5 saved tensors (Q, K, V, O, L), found {len(saved)}",
            )
        )
    n_q, n_k = q.shape[-2], k.shape[-2]
    for t in saved:
        is_lse = tuple(t.shape) == lse_shape
        if (
            not is_lse
            and t.dim() >= 2
            and t.shape[-2:] in ((n_q, n_k), (n_k, n_q))
            and t.shape[-1] != q.shape[-1]
        ):
            raise AssertionError(
                bilingual(
                    f"保存了一个 N×N 张量 {tuple(t.shape)}", f"an N×N tensor {tuple(t.shape)} was saved"
                )
            )
    lse = [t for t in saved if tuple(t.shape) == lse_shape]
    if len(lse) != 1 or lse[0].dtype != torch.float32:
        raise AssertionError(
            bilingual(
                f"应恰好保存一个形状为 {lse_shape} 的 float32 张量 L（log-sum-exp）",
                f"expected exactly one float32 L (log-sum-exp) of shape {lse_shape}",
            )
        )
    qkvo = [t for t in saved if tuple(t.shape) != lse_shape]
    expected = [tuple(q.shape), tuple(k.shape), tuple(v.shape), tuple(output.shape)]
    if sorted(tuple(t.shape) for t in qkvo) != sorted(expected):
        raise AssertionError(
            bilingual(
                f"除 L 外应保存 Q、K、V、O，实际形状为 {[tuple(t.shape) for t in qkvo]}",
                f"besides L, Q, K, V and O should be saved; found shapes {[tuple(t.shape) for t in qkvo]}",
            )
        )
    return lse[0]


class LargestTensor(TorchDispatchMode):
    """Records the largest tensor any aten op produces while active: elements (with its shape) and bytes."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False  # eager only: skip the torch._dynamo wrapper, whose first import takes seconds

    def __init__(self):
        super().__init__()
        self.numel = 0
        self.shape: tuple[int, ...] = ()
        self.nbytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, tuple | list) else (out,):
            if isinstance(t, torch.Tensor):
                if t.numel() > self.numel:
                    self.numel, self.shape = t.numel(), tuple(t.shape)
                self.nbytes = max(self.nbytes, t.numel() * t.element_size())
        return out


def largest_intermediate(fn: Callable[[], object]) -> tuple[int, tuple[int, ...]]:
    """(numel, shape) of the largest tensor created by PyTorch ops while running `fn()`.

    Works on any device. Triton kernels' on-chip tiles are invisible to it, as they should be.
    """
    with LargestTensor() as tracker:
        fn()
    return tracker.numel, tracker.shape


def assert_no_quadratic_tensor(fn: Callable[[], object], q, k, what: str) -> None:
    """Fail if `fn()` creates a tensor with at least a quarter of the elements of the batched Nq×Nk scores."""
    assert_small_intermediate(*largest_intermediate(fn), q, k, what)


def assert_small_intermediate(numel: int, shape: tuple[int, ...], q, k, what: str) -> None:
    """Fail if a tensor of `numel` elements has at least a quarter of the elements of the Nq×Nk scores."""
    scores = q[..., 0].numel() * k.shape[-2]
    if numel * 4 >= scores:
        raise AssertionError(
            bilingual(
                f"{what} 创建了接近 N×N 的中间张量 {shape}（{numel} 个元素，分数矩阵共 {scores} 个）",
                f"{what} created a near-N×N intermediate {shape} ({numel} elements; the scores have {scores})",
            )
        )


def refuse(name: str) -> Callable[..., None]:
    """A stand-in for a forbidden function: calling it fails with a bilingual message naming `name`."""

    def _raise(*args, **kwargs):
        raise AssertionError(
            bilingual(
                f"不允许调用 {name}：请自己实现注意力",
                f"calling {name} is not allowed: implement attention yourself",
            )
        )

    return _raise


@contextlib.contextmanager
def forbid_shortcuts(*extra: tuple[object, str]) -> Iterator[None]:
    """Make torch's fused attention (and any `(owner, attribute)` pairs given) raise while active.

    Graded code that calls `scaled_dot_product_attention` or a course reference earns no credit.
    """
    targets = [(torch.nn.functional, "scaled_dot_product_attention"), *extra]
    originals = [(owner, name, getattr(owner, name)) for owner, name in targets]
    try:
        for owner, name, _ in originals:
            setattr(owner, name, refuse(name))
        yield
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)


def random_qkv(batch, n_q, n_k, d, dtype=torch.float32, device=None, requires_grad=True, seed=None):
    """Fresh random Q (batch, n_q, d), K and V (batch, n_k, d); `batch` may be an int or a tuple."""
    generator = torch.Generator().manual_seed(seed) if seed is not None else None
    lead = (batch,) if isinstance(batch, int) else tuple(batch)
    device = device if device is not None else "cpu"

    def make(n):
        t = torch.randn(*lead, n, d, generator=generator, dtype=torch.float32).to(device=device, dtype=dtype)
        return t.requires_grad_(requires_grad)

    return make(n_q), make(n_k), make(n_k)


__all__ = [
    "LargestTensor",
    "assert_close",
    "assert_no_quadratic_tensor",
    "assert_small_intermediate",
    "check_saved",
    "check_saved_contract",
    "forbid_shortcuts",
    "largest_intermediate",
    "random_qkv",
    "refuse",
    "reference_attention",
    "reference_gradients",
    "saved_tensors",
]
