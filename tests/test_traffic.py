"""The traffic counters: known kernels whose loads and stores are counted by hand, and the slow memory."""

import json
import math
import os
import socket
import subprocess
import sys
import types
from pathlib import Path

import gpu_sim_kernels
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

import utils
from course.judge.services import SlowMemoryService
from utils import io_kernels, runtime
from utils.grading import largest_intermediate
from utils.judged import slow_memory as judged_memory
from utils.judged import tensor_files
from utils.judged.link import LENGTHS, Link
from utils.judged.student_module import MODULE_NAME
from utils.traffic import CounterUnsupported, SlowMemory, count_traffic, triton_counter


@triton.jit
def copy_kernel(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < n), mask=offs < n)


@triton.jit
def unmasked_copy_kernel(X, Y, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs))


@triton.jit
def row_sum_kernel(X, Y, n_rows, n_cols, stride, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """2-D tiles: BLOCK_R rows per program, columns in chunks of BLOCK_C; a strided X."""
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    acc = tl.zeros([BLOCK_R], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_C):
        cols = start + tl.arange(0, BLOCK_C)
        inside = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        acc += tl.sum(tl.load(X + rows[:, None] * stride + cols[None, :], mask=inside, other=0.0), 1)
    tl.store(Y + rows, acc, mask=rows < n_rows)


@triton.jit
def reload_kernel(X, Y, n, PASSES: tl.constexpr, BLOCK: tl.constexpr):
    """Reads its block of X `PASSES` times (like a three-pass softmax), writes Y once."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(PASSES):
        acc += tl.load(X + offs, mask=offs < n, other=0.0)
    tl.store(Y + offs, acc, mask=offs < n)


@triton.jit
def histogram_kernel(X, H, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    bins = tl.load(X + offs, mask=offs < n, other=0)
    tl.atomic_add(H + bins, 1, mask=offs < n)


@triton.jit
def lock_kernel(Lock):
    tl.atomic_cas(Lock, 0, 1)


@triton.jit
def twice(x):
    return x * 2


@triton.jit
def helper_kernel(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(Y + offs, twice(tl.load(X + offs)))


@triton.jit
def out_of_bounds_kernel(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs + BLOCK))  # reads the block after X's end


def test_copy_counts_every_element_once_and_not_the_masked_tail():
    n, block = 1000, 256  # 4 programs; the last has 1000 - 768 = 232 active lanes of 256
    x, y = torch.randn(n), torch.empty(n)
    traffic = count_traffic(copy_kernel, (triton.cdiv(n, block),), x, y, n, BLOCK=block)
    assert torch.equal(x, y)
    assert (traffic.read_bytes("X"), traffic.written_bytes("X")) == (4 * n, 0)
    assert (traffic.read_bytes("Y"), traffic.written_bytes("Y")) == (0, 4 * n)
    assert traffic.total_bytes() == 8 * n
    per_program = traffic.program_bytes("X")
    assert list(per_program.values()) == [4 * 256] * 3 + [4 * 232]
    assert np.array_equal(traffic.read_map("X"), np.ones(n, dtype=np.int64))


def test_unmasked_access_counts_whole_blocks_and_the_element_size():
    x = torch.randn(512).half()
    y = torch.empty_like(x)
    traffic = count_traffic(unmasked_copy_kernel, (4,), x, y, BLOCK=128)
    assert traffic.read_bytes("X") == 2 * 512 and traffic.written_bytes("Y") == 2 * 512


def test_two_dimensional_tiles_of_a_strided_tensor():
    n_rows, n_cols, stride = 37, 50, 64  # a view: 50 of every 64 columns
    base = torch.randn(n_rows, stride)
    x = base[:, :n_cols]
    y = torch.empty(n_rows)
    traffic = count_traffic(
        row_sum_kernel, (triton.cdiv(n_rows, 16),), x, y, n_rows, n_cols, stride, BLOCK_R=16, BLOCK_C=16
    )
    torch.testing.assert_close(y, x.sum(1))
    assert traffic.read_bytes("X") == 4 * n_rows * n_cols  # masked rows and columns are not traffic
    assert traffic.written_bytes("Y") == 4 * n_rows
    counts = traffic.read_map("X")  # flat over the view's extent: the 14 skipped columns of each row are 0
    assert counts.sum() == n_rows * n_cols and counts.max() == 1


def test_a_kernel_that_reloads_pays_for_every_pass():
    n = 300
    x, y = torch.randn(n), torch.empty(n)
    for passes in (1, 3):
        traffic = count_traffic(reload_kernel, (3,), x, y, n, PASSES=passes, BLOCK=128)
        assert traffic.read_bytes("X") == passes * 4 * n
        assert traffic.written_bytes("Y") == 4 * n
        assert traffic.read_map("X").max() == passes


def test_atomic_add_counts_a_read_and_a_write_per_active_lane():
    x = torch.randint(0, 8, (100,), dtype=torch.int32)
    h = torch.zeros(8, dtype=torch.int32)
    traffic = count_traffic(histogram_kernel, (2,), x, h, 100, BLOCK=64)
    assert torch.equal(h, torch.bincount(x, minlength=8).int())
    assert traffic.read_bytes("H") == traffic.written_bytes("H") == 4 * 100


def test_compare_and_swap_is_refused_not_miscounted():
    with pytest.raises(Exception, match="cannot count tl.atomic_cas"):  # raised inside the interpreter
        count_traffic(lock_kernel, (1,), torch.zeros(1, dtype=torch.int32))


def test_accesses_outside_every_tensor_are_reported_separately():
    x, y = torch.randn(64), torch.empty(32)
    traffic = count_traffic(out_of_bounds_kernel, (1,), x[:32], y, BLOCK=32)
    assert traffic.read_bytes("X") == 0 and traffic.outside == [4 * 32, 0]
    assert "outside every tensor" in traffic.table()


def test_traffic_of_several_launches_adds_up_by_tensor_name():
    x, y = torch.randn(100), torch.empty(100)
    one = count_traffic(copy_kernel, (1,), x, y, 100, BLOCK=128)
    both = one + count_traffic(copy_kernel, (1,), x, y, 100, BLOCK=128)
    assert both.read_bytes("X") == 800 and both.total_bytes() == 2 * one.total_bytes()


def test_a_gpu_machine_counts_in_an_interpreter_child_process(tmp_path):
    """A simulated GPU machine (a CUDA torch reports, no TRITON_INTERPRET): Triton is imported in compile mode,
    so the kernel, its helper and tl.sum/tl.max are JITFunctions there. Counted in a child process, an
    importable kernel and one defined in `__main__` (like a notebook's) give this process's CPU count."""
    script = Path(__file__).with_name("gpu_sim_kernels.py")
    prelude = (
        "import sys, runpy, torch; torch.cuda.is_available = lambda: True; "
        "torch.cuda.get_device_name = lambda *_: 'simulated GPU'; "
        "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", runtime.ENV_VAR)}
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([root, str(script.parent)])
    done = subprocess.run(
        [sys.executable, "-c", prelude, str(script), str(tmp_path)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    (x, y, m, *_), traffic = gpu_sim_kernels.counted(gpu_sim_kernels.softmax_rows_kernel)
    torch.testing.assert_close(y, 0.5 * torch.softmax(x, 1))
    assert traffic.read_bytes("X") == 4 * 5 * 37 and traffic.written_bytes() == 4 * (5 * 37 + 5)
    for where in ("module", "main"):
        got = tensor_files.load(tmp_path / where)
        assert torch.equal(got["Y"], y) and torch.equal(got["M"], m)
        assert results[where]["bytes"] == traffic.bytes and results[where]["outside"] == traffic.outside
        assert results[where]["programs"] == {str(p): dict(per) for p, per in traffic.programs.items()}
        for name, maps in traffic.maps.items():
            assert all(np.array_equal(got[f"{name}{w}"].numpy(), maps[w]) for w in (0, 1))


def test_child_process_count_copies_back_into_views_of_one_storage(monkeypatch):
    """The child-process path, called here: outputs land in the caller's tensors, views of one storage stay
    views of one another, and the count equals this process's."""
    base = torch.zeros(2, 64)
    x, y = base[0, :50], base[1, :50]
    x.copy_(torch.randn(50))
    expected = count_traffic(helper_kernel, (1,), x, torch.empty(64), BLOCK=64)
    monkeypatch.setattr(triton_counter.runtime, "interpreter", lambda: False)
    traffic = count_traffic(copy_kernel, (1,), x, y, 50, BLOCK=64)
    assert torch.equal(y, x) and base[1, 50:].eq(0).all()
    assert traffic.total_bytes() == 2 * 4 * 50 and traffic.read_map("X").sum() == 50
    doubled = torch.empty(64)
    traffic = count_traffic(helper_kernel, (1,), x, doubled, BLOCK=64)  # 14 floats past x: outside
    assert torch.equal(doubled[:50], 2 * x)
    assert (
        (traffic.bytes, traffic.outside)
        == (expected.bytes, expected.outside)
        == (
            {"X": [200, 0], "Y": [0, 256]},
            [56, 0],
        )
    )


def test_a_failing_child_process_reports_its_error(monkeypatch):
    monkeypatch.setattr(triton_counter.runtime, "interpreter", lambda: False)
    monkeypatch.setattr(triton_counter, "_CHILD", "import sys; sys.exit('boom: no interpreter here')")
    with pytest.raises(RuntimeError, match=r"(?s)interpreter child process failed \(exit 1\).*boom"):
        count_traffic(copy_kernel, (1,), torch.randn(4), torch.empty(4), 4, BLOCK=4)
    monkeypatch.undo()
    monkeypatch.setattr(triton_counter.runtime, "interpreter", lambda: False)
    with pytest.raises(TypeError, match="cannot be sent to the interpreter child process"):
        count_traffic(copy_kernel, (1,), torch.randn(4), torch.empty(4), [4], BLOCK=4)


def test_counter_refuses_a_triton_whose_interpreter_changed(monkeypatch):
    from triton.runtime import interpreter

    def create_masked_load(self, pointers, mask, other):  # renamed parameter: a different interpreter
        raise AssertionError("never called")

    monkeypatch.setattr(type(interpreter.interpreter_builder), "create_masked_load", create_masked_load)
    with pytest.raises(CounterUnsupported, match="traffic counter cannot count reliably"):
        triton_counter._interpreter()  # on a GPU the count runs in a child process, whose Triton is unpatched
    if runtime.interpreter():
        with pytest.raises(CounterUnsupported, match="traffic counter cannot count reliably"):
            count_traffic(copy_kernel, (1,), torch.randn(4), torch.empty(4), 4, BLOCK=4)


def test_counter_leaves_the_interpreter_as_it_found_it():
    from triton.runtime import interpreter

    count_traffic(copy_kernel, (1,), torch.randn(4), torch.empty(4), 4, BLOCK=4)
    assert "create_masked_load" not in vars(interpreter.interpreter_builder)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_io_kernels_move_the_bytes_of_the_io_formulas(dtype):
    n, d, block_q = 77, 32, 32
    e = torch.tensor([], dtype=dtype).element_size()
    q, k, v = (torch.randn(1, n, d).to(dtype) for _ in range(3))
    tiles = math.ceil(n / block_q)
    out, standard = io_kernels.standard_attention(q, k, v, block_q=block_q, block_k=16, count=True)
    assert standard.read_bytes("S") == standard.written_bytes("S") == e * n * n
    assert standard.read_bytes("P") == standard.written_bytes("P") == e * n * n
    assert standard.read_bytes("K") == standard.read_bytes("V") == e * n * d * tiles
    assert standard.total_bytes() == e * (2 * n * d + 2 * n * d * tiles + 4 * n * n)
    (fused_out, lse), fused = io_kernels.fused_attention(q, k, v, block_q=block_q, count=True)
    assert fused.total_bytes() == e * (2 * n * d + 2 * n * d * tiles) + 4 * n
    reference = utils.naive_attention(q.double(), k.double(), v.double())
    tolerance = 1e-5 if dtype == torch.float32 else 2e-3
    torch.testing.assert_close(out.double(), reference, atol=tolerance, rtol=tolerance)
    torch.testing.assert_close(fused_out.double(), reference, atol=tolerance, rtol=tolerance)


@pytest.mark.parametrize("is_causal", [False, True])
def test_fused_scale_mask_softmax_reads_once_and_the_unfused_sequence_three_times(is_causal):
    s = torch.randn(2, 45, 70)
    visible = (
        torch.ones(45, 70, dtype=torch.bool).tril() if is_causal else torch.ones(45, 70, dtype=torch.bool)
    )
    expected = torch.softmax((0.3 * s).masked_fill(~visible, float("-inf")), -1)
    fused_p, fused = io_kernels.scale_mask_softmax(s, 0.3, is_causal, fused=True, count=True)
    unfused_p, unfused = io_kernels.scale_mask_softmax(s, 0.3, is_causal, fused=False, count=True)
    torch.testing.assert_close(fused_p, expected)
    torch.testing.assert_close(unfused_p, expected)
    size = 4 * s.numel()
    assert fused.read_bytes() == 4 * 2 * int(visible.sum()) and fused.written_bytes() == size
    assert unfused.total_bytes() == (3 if is_causal else 2) * 2 * size  # scale, (mask,) softmax: round trips


def test_copy_and_repeat_kernels():
    x = torch.randn(3000)
    y, traffic = io_kernels.copy(x, count=True)
    assert torch.equal(x, y) and traffic.total_bytes() == 2 * 4 * 3000
    expected = x.clone()
    for _ in range(5):
        expected = expected * 0.999 + 0.001
    y, traffic = io_kernels.repeat(x, 5, count=True)
    torch.testing.assert_close(y, expected)
    assert traffic.total_bytes() == 2 * 4 * 3000  # the FLOPs grew, the traffic did not


def test_slow_memory_counts_reads_and_writes_per_element():
    mem = SlowMemory(S=torch.arange(12.0).view(3, 4), P=torch.zeros(3, 4, dtype=torch.float16))
    tile = mem["S"][1:, ::2]
    assert torch.equal(tile, torch.tensor([[4.0, 6.0], [8.0, 10.0]]))
    tile += 100  # a copy in fast memory: slow memory is unchanged
    assert mem.tensor("S")[1, 0] == 4
    mem["S"][torch.tensor([0, 0, 2])]  # fancy indexing, with a repeated row
    mem["P"][:, 1] = torch.ones(3)
    assert mem["P"].dtype == torch.float16 and mem.tensor("P")[:, 1].tolist() == [1, 1, 1]
    reads = mem.read_map("S")
    assert (
        reads[0].tolist() == [2, 2, 2, 2]
        and reads[1].tolist() == [1, 0, 1, 0]
        and reads[2].tolist() == [2, 1, 2, 1]
    )
    assert mem.stats()["S"] == {
        "read_elements": 16,
        "written_elements": 0,
        "read_bytes": 64,
        "written_bytes": 0,
    }
    assert mem.written_bytes() == 3 * 2 and mem.read_bytes() == 64
    assert mem.write_map("P")[:, 1].tolist() == [1, 1, 1] and int(mem.write_map("P").sum()) == 3
    assert "total" in mem.table()
    mem.reset_counts()
    assert mem.total_bytes() == 0


def test_slow_memory_shapes_are_free_and_scratch_is_counted():
    mem = SlowMemory(X=torch.randn(5, 6))
    assert mem["X"].shape == (5, 6) and mem["X"].size(1) == 6 and mem["X"].dtype == torch.float32
    assert mem.total_bytes() == 0
    mem.alloc("tmp", (5, 6))
    mem["tmp"][:] = mem["X"][:] * 2
    mem["tmp"][:]
    assert mem.stats()["tmp"]["read_bytes"] == mem.stats()["tmp"]["written_bytes"] == 4 * 30


def test_slow_memory_errors_are_bilingual():
    mem = SlowMemory(X=torch.randn(2))
    with pytest.raises(KeyError, match="slow memory holds no 'Y'"):
        mem["Y"]
    with pytest.raises(ValueError, match="already holds"):
        mem.add("X", torch.randn(2))
    with pytest.raises(TypeError, match="must be a torch.Tensor"):
        SlowMemory(X=[1, 2])


def test_slow_memory_bookkeeping_is_invisible_to_the_largest_tensor_watch():
    """Only the tiles brought into fast memory count as the code's own tensors."""
    s, p = torch.randn(64, 64), torch.empty(64, 64)

    def by_rows():
        mem = SlowMemory(S=s, P=p)
        for r in range(0, 64, 8):
            mem["P"][r : r + 8] = torch.softmax(mem["S"][r : r + 8], -1)

    numel, shape = largest_intermediate(by_rows)
    assert numel == 8 * 64, shape


@pytest.fixture
def student(monkeypatch):
    """The student's module of the judged child, in this process (the service's thread plays the judge)."""
    module = types.ModuleType(MODULE_NAME)
    monkeypatch.setitem(sys.modules, MODULE_NAME, module)
    return module


def test_judged_memory_is_counted_in_the_judges_service(student, tmp_path):
    def scale_rows(mem, scale):
        for r in range(mem["S"].shape[0]):
            mem["P"][r] = mem["S"][r] * scale

    student.scale_rows = scale_rows
    s = torch.randn(3, 5)
    with SlowMemoryService(tmp_path, S=s, P=torch.full_like(s, float("nan"))) as memory:
        created = largest_intermediate(lambda: judged_memory.run("scale_rows", memory.address, 2.0))
    assert created == (5, (5,))  # the rows the code scaled; the link's bytes are not the code's tensors
    out, (reads,), output_reads, writes, stats = memory.result(["S"], "P")
    torch.testing.assert_close(out, 2 * s)
    assert reads.eq(1).all() and output_reads.eq(0).all() and writes.eq(1).all()
    assert stats == (("S", 60, 0), ("P", 0, 60)) and memory.largest == {"numel": 5, "shape": [5]}
    assert memory.fast_memory({"numel": 7, "shape": [7]}) == (7, (7,))
    assert not list(tmp_path.glob("*.sock"))  # the socket goes with the service


def test_judged_memory_reads_and_writes_every_kind_of_index(tmp_path):
    x = torch.arange(60.0).view(3, 4, 5)
    indexes = [
        1,
        (slice(None), slice(1, None, 2)),
        (None, Ellipsis, 2),
        (True,),
        torch.tensor([2, 0, 2]),
        [0, 2],
        (torch.tensor([[0], [1]]), torch.tensor([[1, 3]])),
        x.sum(-1) > 100,
        (torch.tensor(1), slice(torch.tensor(1), 3)),
        (np.int64(2), np.array([1, 3])),
    ]
    with SlowMemoryService(tmp_path, X=x) as memory, Link(memory.address) as link:
        mem = judged_memory.JudgedMemory(link)
        assert mem.names() == ["X"] and "X" in mem and mem["X"].shape == (3, 4, 5)
        assert mem["X"].dtype == torch.float32 and mem["X"].numel() == 60 and mem["X"].element_size() == 4
        for index in indexes:
            assert torch.equal(mem["X"][index], x[index]), index
        mem["X"][0, :, 1] = torch.ones(4, dtype=torch.float64)
        mem["X"][2, 3] = 7
        mem.alloc("T", (2, 2), torch.float16)[:] = torch.ones(2, 2)
        assert mem["T"].dtype == torch.float16 and mem["T"][1].tolist() == [1, 1]
        with pytest.raises(IndexError):
            mem["X"][5]
        with pytest.raises(KeyError, match="slow memory holds no 'Y'"):
            mem["Y"]
        with pytest.raises(TypeError, match="unsupported index type"):
            mem["X"][1.5]
    contents = memory.memory.tensor("X")
    assert contents[0, :, 1].eq(1).all() and contents[2, 3].eq(7).all()
    assert (
        memory.memory.stats()["X"]["written_elements"] == 9 and memory.largest["numel"] == 60
    )  # X[True]: all of it


def test_judged_memory_has_no_uncounted_door(tmp_path):
    """What a notebook's SlowMemory offers besides counted indexing is refused here, and nothing in this process
    holds the data or the counts."""
    with SlowMemoryService(tmp_path, S=torch.randn(4, 4)) as memory, Link(memory.address) as link:
        mem = judged_memory.JudgedMemory(link)
        mem["S"][:2]
        for owner, name in [(mem, "tensor"), (mem, "reset_counts"), (mem, "read_map"), (mem["S"], "_data")]:
            with pytest.raises(AttributeError, match=f"counted in the judge's process.*no {name}"):
                getattr(owner, name)
        assert not any(isinstance(v, torch.Tensor) for v in vars(mem["S"]).values())
    assert memory.memory.stats()["S"]["read_elements"] == 8


def test_the_service_survives_malformed_requests(tmp_path):
    with SlowMemoryService(tmp_path, S=torch.randn(4)) as memory:
        raw = socket.socket(socket.AF_UNIX)
        raw.connect(memory.address)
        raw.sendall(LENGTHS.pack(4, 0, 0) + b"[1]]")  # not JSON: the connection is dropped
        assert raw.recv(1) == b""
        raw.close()
        with Link(memory.address) as link:
            for request, error in [
                ({"op": "read", "name": "S", "index": {"int": 1.5}}, TypeError),
                ({"op": "read", "name": "S", "index": {"tensor": "nowhere"}}, TypeError),
                ({"op": "write", "name": "S", "index": {"int": 0}, "number": "7"}, TypeError),
                ({"op": "alloc", "name": "huge", "shape": [1 << 40], "dtype": "float32"}, ValueError),
                ({"op": "reset_counts"}, ValueError),
            ]:
                with pytest.raises(error):
                    link.request(request)
            assert link.request({"op": "read", "name": "S", "index": {"int": 2}})[1]["tile"].numel() == 1
    assert memory.memory.read_bytes() == 4 and memory.memory.written_bytes() == 0


@pytest.mark.gpu
def test_counting_gpu_tensors_copies_results_back():
    x = torch.randn(5000, device="cuda")
    y, traffic = io_kernels.copy(x, count=True)
    assert y.device.type == "cuda" and torch.equal(x, y)
    assert traffic.total_bytes() == 2 * 4 * 5000
    q, k, v = (torch.randn(1, 70, 64, device="cuda", dtype=torch.float16) for _ in range(3))
    (out, _), traffic = io_kernels.fused_attention(q, k, v, block_q=32, count=True)
    torch.testing.assert_close(
        out.float(), utils.naive_attention(q.float(), k.float(), v.float()), atol=2e-3, rtol=2e-3
    )
    assert traffic.total_bytes() == 2 * (2 * 70 * 64 + 2 * 70 * 64 * 3) + 4 * 70


@pytest.mark.gpu
def test_io_kernels_run_on_the_gpu():
    s = torch.randn(4, 300, 300, device="cuda", dtype=torch.float16)
    fused = io_kernels.scale_mask_softmax(s, 0.125, True)
    unfused = io_kernels.scale_mask_softmax(s, 0.125, True, fused=False)
    torch.testing.assert_close(fused, unfused)
    q, k, v = (torch.randn(2, 256, 64, device="cuda", dtype=torch.float16) for _ in range(3))
    reference = utils.naive_attention(q, k, v).float()
    torch.testing.assert_close(
        io_kernels.standard_attention(q, k, v).float(), reference, atol=1e-2, rtol=1e-2
    )
    torch.testing.assert_close(
        io_kernels.fused_attention(q, k, v)[0].float(), reference, atol=1e-2, rtol=1e-2
    )
    torch.testing.assert_close(
        io_kernels.repeat(s.flatten(), 3).float(),
        (((s.flatten().float() * 0.999 + 0.001) * 0.999 + 0.001) * 0.999 + 0.001),
        atol=2e-3,
        rtol=2e-3,
    )
