"""utils.memory: the live-tensor count against cases counted by hand (temporaries, in-place, views, saved
tensors, releases), and the attention step whose peak unit 01 models."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from utils.grading import LargestTensor
from utils.memory import LiveTensors, attention_step, peak_bytes, trace

F32 = 4


@pytest.fixture
def n() -> int:
    return int(torch.randint(100, 1000, ()).item())


def test_a_chain_of_ops_holds_two_temporaries_at_once(n):
    a = torch.randn(n)  # existed before: not counted
    with LiveTensors() as live:
        out = ((a * 2) + 1).exp()  # a*2 lives until +1 is done (2n), then exp runs beside a*2+1 (2n)
        assert live.live == n * F32  # only `out` is left
    assert live.peak == 2 * n * F32
    del out
    assert live.live == 0  # releases are still counted after the block


def test_in_place_results_and_views_count_once(n):
    with LiveTensors() as live:
        x = torch.zeros(4, n)
        x.add_(1).mul_(3)
        x[::2].fill_(0)
        views = [x.t(), x.view(-1), x[1], x.expand(2, 4, n), x.detach(), x.to(torch.float32)]
        assert live.live == 4 * n * F32
        copy = x.t().contiguous()  # a transposed copy is a new storage
        assert live.live == 2 * 4 * n * F32
    del views, copy


def test_tensors_that_existed_before_are_the_baseline(n):
    a = torch.randn(n)
    with LiveTensors() as live:
        a.add_(1)
        b = a[::2]
        c = a.clone()
    assert live.peak == n * F32  # only the clone
    del b, c


def test_a_reassigned_name_holds_two_buffers_for_a_moment(n):
    def loop():
        for _ in range(5):
            t = torch.empty(n)  # the new buffer exists before the old one is released
        return t

    with LiveTensors() as live:
        loop()
    assert live.peak == 2 * n * F32 and live.live == 0


def test_tensors_saved_for_backward_count_until_the_graph_goes(n):
    x = torch.randn(n, requires_grad=True)
    with LiveTensors() as live:
        y = x.exp()  # ExpBackward saves its result
        z = y.sum()
        del y
        assert live.live == n * F32 + F32  # y's storage, held by autograd, and the scalar z
        del z
        assert live.live == 0


def test_resized_and_out_buffers(n):
    a = torch.randn(n)
    before = torch.empty(n)
    with LiveTensors() as live:
        x = torch.empty(0)
        x.resize_(n)  # the same storage grows
        assert live.live == n * F32
        torch.add(a, a, out=x)  # writes into x: nothing new
        torch.add(a, a, out=before)  # writes into a tensor that existed: nothing new
        assert live.live == n * F32
    del x


def test_it_stacks_with_other_dispatch_modes(n):
    with LiveTensors() as live, LargestTensor() as largest:
        torch.ones(n).clone()
    assert live.peak == 2 * n * F32 and largest.nbytes == n * F32


def test_meta_tensors_count_what_would_be_allocated():
    assert peak_bytes(lambda: torch.empty(1000, 1000, device="meta")) == 4_000_000


def test_trace_prints_each_allocation_and_marks_the_peak(capsys):
    peak = trace(lambda: torch.ones(8).add(1))
    lines = capsys.readouterr().out.splitlines()
    assert peak == 2 * 8 * F32
    assert [line.split()[0] for line in lines] == ["+", "+", "−", "−"]
    assert "◀ peak" in lines[1] and "ones" in lines[0] and "add" in lines[1]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("training", [False, True])
def test_attention_step_peak_counted_by_hand(dtype, training):
    """One call of naive attention on fresh inputs (B·H = 2, N = 128, d = 32): the tensors alive at the peak."""
    bh, n, d, s = 2, 128, 32, dtype.itemsize
    scores, rows = bh * n * n, bh * n * d  # elements of one N×N and one N×d tensor
    if training:  # softmax backward: P (fp32, saved), dP and dS (fp32); Q, K, V, O, dO, dV
        expected = 3 * 4 * scores + 6 * s * rows
    elif dtype == torch.float32:  # at P V: S, P; Q, K, V, O
        expected = 2 * 4 * scores + 4 * s * rows
    else:  # at the softmax: S, its float32 copy and the float32 softmax; Q, K, V
        expected = (s + 4 + 4) * scores + 3 * s * rows
    assert peak_bytes(attention_step(1, bh, n, d, dtype, training)) == expected


def test_the_counting_modes_do_not_import_dynamo():
    """Dispatch modes are wrapped for torch.compile by default, importing torch._dynamo (seconds) on first use."""
    code = (
        "import sys, torch\n"
        "from utils.grading import LargestTensor\n"
        "from utils.memory import LiveTensors\n"
        "with LiveTensors(), LargestTensor():\n"
        "    torch.ones(3).add(1)\n"
        "assert 'torch._dynamo' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parent.parent)
