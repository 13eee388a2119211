"""Memory contract, input errors and the per-device kernel configs of the attention implementations."""

import pytest
import torch

import utils
from course.reference import FlashAttentionPyTorch, FlashAttentionTriton, flash_attention, flash_triton
from course.reference import triton_configs as configs
from utils import naive_attention
from utils.grading import assert_no_quadratic_tensor, random_qkv

FUNCTIONS = {"pytorch": FlashAttentionPyTorch, "triton": FlashAttentionTriton}


def forward_backward(fn, q, k, v, causal):
    def run():
        fn.apply(q, k, v, causal).sum().backward()

    return run


# Triton: N >> d because the interpreter copies each input as raw bytes (4·N·d), which must stay
# below N²/4; its host code is the same with and without the causal mask.
@pytest.mark.parametrize(
    ("impl", "causal", "n"), [("pytorch", False, 200), ("pytorch", True, 200), ("triton", True, 400)]
)
def test_no_quadratic_intermediate_in_forward_or_backward(impl, causal, n):
    q, k, v = random_qkv(1, n, n - 20, 16, device=utils.device())
    assert_no_quadratic_tensor(forward_backward(FUNCTIONS[impl], q, k, v, causal), q, k, impl)


def test_the_quadratic_check_catches_the_naive_version():
    q, k, v = random_qkv(1, 200, 190, 16, device=utils.device())
    with pytest.raises(AssertionError, match="N×N"):
        assert_no_quadratic_tensor(lambda: naive_attention(q, k, v).sum().backward(), q, k, "naive")


def tensors(shape_q=(2, 8, 16), shape_k=(2, 8, 16), shape_v=None, dtype=torch.float32):
    device = utils.device()
    return (
        torch.randn(shape_q, dtype=dtype, device=device),
        torch.randn(shape_k, dtype=dtype, device=device),
        torch.randn(shape_v or shape_k, dtype=dtype, device=device),
    )


BAD_INPUTS = [
    (tensors(shape_k=(3, 8, 16)), "batch/head dims differ"),
    (tensors(shape_k=(2, 8, 32)), "head dim d differs"),
    (tensors(shape_v=(2, 9, 16)), "different sequence lengths"),
    ((torch.zeros(2, 0, 16), *tensors()[1:]), "empty"),
    ((tensors()[0].half(), *tensors()[1:]), "different dtypes"),
    ((tensors()[0].to("meta"), *tensors()[1:]), "different devices"),
]


@pytest.mark.parametrize("backend", ["pytorch", "triton", "naive"])
@pytest.mark.parametrize(("qkv", "needle"), BAD_INPUTS)
def test_bad_input_names_the_problem(backend, qkv, needle):
    with pytest.raises(ValueError, match=needle):
        flash_attention(*qkv, backend=backend)


@pytest.mark.parametrize("d", [8, 24, 256])
def test_triton_rejects_unsupported_head_dims(d):
    with pytest.raises(ValueError, match=f"unsupported head dim d={d}"):
        FlashAttentionTriton.apply(*tensors((2, 8, d), (2, 8, d)))


def test_triton_rejects_float64_but_pytorch_supports_it():
    q, k, v = tensors(dtype=torch.float64)
    with pytest.raises(ValueError, match="float64"):
        FlashAttentionTriton.apply(q, k, v)
    assert FlashAttentionPyTorch.apply(q, k, v).dtype == torch.float64


def test_unknown_backend():
    with pytest.raises(ValueError, match="unknown backend='cuda'"):
        flash_attention(*tensors(), backend="cuda")


LAPTOP_SHARED_MEMORY = 101376  # bytes per block, e.g. an RTX 3060/4070 laptop GPU (sm_86/89)
H100_SHARED_MEMORY = 232448


@pytest.mark.parametrize("kernel", ["forward", "dkdv", "dq"])
@pytest.mark.parametrize("budget", [LAPTOP_SHARED_MEMORY, H100_SHARED_MEMORY])
def test_gpu_configs_fit_shared_memory(monkeypatch, kernel, budget):
    monkeypatch.setattr(configs, "max_shared_memory", lambda index: budget)
    monkeypatch.setattr(configs, "device_name", lambda index: "A GPU never tuned")
    gpu = torch.device("cuda", 0)
    for d in (16, 32, 64, 128):
        for dtype in (torch.float16, torch.bfloat16, torch.float32):
            size = torch.empty((), dtype=dtype).element_size()
            fitting = configs.candidate_configs(kernel, d, dtype, gpu)
            assert fitting, f"no {kernel} config for d={d} {dtype} within {budget} B"
            assert all(configs.shared_memory_estimate(kernel, c, d, size) <= budget for c in fitting)
    # tiles are only dropped where they do not fit: all fit an H100 at d=64, not a laptop at d=128
    every = configs._GPU_CANDIDATES[16][kernel]
    if budget == H100_SHARED_MEMORY:
        assert configs.candidate_configs(kernel, 64, torch.float16, gpu) == every
    else:
        assert every[0] not in configs.candidate_configs(kernel, 128, torch.float16, gpu)


def test_shared_memory_estimate_grows_with_tiles_stages_and_dtype():
    small, big = configs.KernelConfig(32, 32, 4, 1), configs.KernelConfig(64, 32, 4, 1)
    deep = configs.KernelConfig(32, 32, 4, 3)
    for kernel in ("forward", "dkdv", "dq"):
        base = configs.shared_memory_estimate(kernel, small, 64, 2)
        assert configs.shared_memory_estimate(kernel, big, 64, 2) > base
        assert configs.shared_memory_estimate(kernel, deep, 64, 2) > base
        assert configs.shared_memory_estimate(kernel, small, 64, 4) == 2 * base


class FakeKernel:
    """Stands in for a Triton kernel whose biggest config runs out of shared memory when compiled."""

    def __init__(self, too_big_block_q):
        self.too_big_block_q, self.launches = too_big_block_q, []

    def __getitem__(self, grid):
        def launch(*args, BLOCK_Q, **kwargs):
            if BLOCK_Q == self.too_big_block_q:
                raise flash_triton.triton.runtime.errors.OutOfResources(300000, 232448, "shared memory")
            self.launches.append((grid, BLOCK_Q))

        return launch


def test_launch_falls_back_to_a_smaller_config_and_remembers_it(monkeypatch):
    big, small = configs.KernelConfig(128, 64, 4, 3), configs.KernelConfig(64, 32, 4, 2)
    monkeypatch.setattr(configs, "candidate_configs", lambda *args: [big, small])
    monkeypatch.setattr(flash_triton, "_chosen_configs", {})
    kernel = FakeKernel(too_big_block_q=128)
    for _ in range(2):
        flash_triton._launch(
            "forward", kernel, (), 1000, lambda c: c.block_q, 6, torch.float16, "cuda:0", 1000,
            HEAD_DIM=64, IS_CAUSAL=False,
        )  # fmt: skip
    assert kernel.launches == [((16, 6), 64), ((16, 6), 64)]
    assert flash_triton._chosen_configs[("forward", 64, torch.float16, False, 1024, "cuda:0")] == small


def test_launch_reports_when_nothing_fits(monkeypatch):
    monkeypatch.setattr(configs, "candidate_configs", lambda *args: [configs.KernelConfig(128, 64, 4, 3)])
    monkeypatch.setattr(flash_triton, "_chosen_configs", {})
    with pytest.raises(RuntimeError, match="no forward kernel config fits"):
        flash_triton._launch(
            "forward", FakeKernel(128), (), 10, lambda c: c.block_q, 1, torch.float16, "cuda:0", 10,
            HEAD_DIM=64, IS_CAUSAL=True,
        )  # fmt: skip
