"""GPU only: the Triton kernels at realistic sizes in every dtype, and peak memory linear in N."""

import itertools

import pytest
import torch
from attention_checks import Tolerance, check_forward_backward

import utils
from course.reference import FlashAttentionPyTorch, FlashAttentionTriton
from utils.grading import random_qkv

pytestmark = pytest.mark.gpu

# Like every FlashAttention, the kernels round P to the input dtype before P·V and dS before dS·K / dSᵀ·Q,
# so half-precision errors are a few rounding units of that dtype (fp16: 2⁻¹¹, bf16: 2⁻⁸) times the
# largest value. float32 runs fp32-level products ("tf32x3"; plain TF32, ~1e-3, would fail its bound).
# Measured on an H100 (N up to 16k): max error / max|ref| ≤ 5e-6 (fp32), 5.3e-4 (fp16), 4.3e-3 (bf16).
TOLERANCES = {
    torch.float32: Tolerance(2e-5, 1e-4),
    torch.float16: Tolerance(2e-3, 1e-2),
    torch.bfloat16: Tolerance(1.6e-2, 5e-2),
}

CASES = [  # (leading dims, Nq, Nk, d, causal)
    ((2, 3), 1000, 1000, 16, True),
    ((1, 2), 4096, 4096, 64, False),
    ((1, 2), 4096, 4096, 64, True),
    ((2,), 4097, 3001, 128, True),  # Nq > Nk, odd sizes
    ((2,), 3001, 4097, 32, False),  # Nq < Nk
    ((1,), 8191, 8191, 16, False),
    ((1,), 8000, 8000, 128, True),
    ((1,), 16384, 16384, 64, True),
]


@pytest.mark.parametrize("dtype", TOLERANCES, ids=str)
@pytest.mark.parametrize(("lead", "n_q", "n_k", "d", "causal"), CASES)
def test_triton_matches_float64_at_scale(dtype, lead, n_q, n_k, d, causal):
    q, k, v = random_qkv(lead, n_q, n_k, d, dtype=dtype, device=utils.device())
    check_forward_backward(FlashAttentionTriton.apply, q, k, v, causal, TOLERANCES[dtype])


@pytest.mark.parametrize("dtype", TOLERANCES, ids=str)
@pytest.mark.parametrize("causal", [False, True])
def test_pytorch_version_on_gpu(dtype, causal):
    q, k, v = random_qkv((2, 2), 1500, 1100, 64, dtype=dtype, device=utils.device())
    cpu_tolerance = {torch.float32: Tolerance(2e-5, 1e-4), torch.float16: Tolerance(3e-3, 1e-2)}
    tol = cpu_tolerance.get(dtype, Tolerance(2e-2, 4e-2))  # float32 inside, one rounding at the end
    check_forward_backward(FlashAttentionPyTorch.apply, q, k, v, causal, tol)


def test_cpu_tensors_are_rejected_in_gpu_mode():
    q, k, v = random_qkv(2, 16, 16, 16)
    with pytest.raises(ValueError, match="CUDA device"):
        FlashAttentionTriton.apply(q, k, v)


def peak_memory_forward_backward(n: int) -> int:
    """Bytes allocated at the peak of one forward + backward (one head, d=64, fp16), inputs included."""
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    q, k, v = random_qkv(1, n, n, 64, dtype=torch.float16, device=utils.device())
    out = FlashAttentionTriton.apply(q, k, v, False)
    out.backward(torch.randn_like(out))
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base


def test_peak_memory_grows_linearly_up_to_128k():
    sizes = [4096 * 2**i for i in range(6)]  # 4k ... 128k
    peaks = [peak_memory_forward_backward(n) for n in sizes]
    report = ", ".join(f"N={n}: {p / 2**20:.1f} MiB" for n, p in zip(sizes, peaks, strict=True))
    print(report)
    for smaller, larger in itertools.pairwise(peaks):
        assert larger <= 2.2 * smaller, report
    n = sizes[-1]
    assert peaks[-1] * 100 < n * n * 2, (
        f"{report}; the fp16 N×N scores alone need {n * n * 2 / 2**30:.0f} GiB"
    )
