"""Unit 05 (recomputation): the notebook runs top to bottom; the layer-chain simulator is exact (brute force) and
predicts measured peaks; the judge's byte counts match what PyTorch saves; the reference solutions behave as
the judge demands; the child's entry points report what the judge reads; the judge grades the solution and a
mistake as it should."""

import itertools
import random
import sys
import types

import pytest
import torch
from exercise_spec import dtypes_stated, exercise_text
from judge_cases import recorded_calls
from notebook_run import ROOT, execute, judged_self_checks, stdout_of
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

import utils
from course import notebooks, wrong
from course.judge import preprocessor, unit05, units
from course.reference import recompute as reference
from utils import checkpoint_schedules as schedules
from utils import grading, measure, recompute
from utils.judged.recompute import DRAWS, checkpoint_gradients, checkpoint_memory, storage
from utils.judged.student_module import MODULE_NAME

NOTEBOOK = ROOT / "source" / "05_recomputation" / "recomputation.ipynb"
DEVICE = utils.device()


def test_unit05_executes_cleanly(tmp_path):
    nb = execute(NOTEBOOK, tmp_path)
    assert set(judged_self_checks(nb, "05")) == {
        "test_saved_bytes",
        "test_checkpoint_gradients",
        "test_checkpoint_memory",
        "test_backward_lse",
        "test_backward_lse_causal",
    }
    simulator = next(c for c in nb.cells if c.cell_type == "code" and "all_schedules(n)" in c.source)
    assert "2048" in stdout_of(simulator)  # 2^(12-1) schedules, the DP agreeing with brute force


# --- the simulator -------------------------------------------------------------------------------------------


def test_the_dynamic_programme_finds_the_brute_force_optimum():
    rng = random.Random(5)
    for _ in range(150):
        n = rng.randint(1, 9)
        sizes = [rng.choice([1, 2, 3, 5, 8]) for _ in range(n)]
        costs = [rng.choice([1, 2, 3]) for _ in range(n)]
        every = [schedules.simulate(sizes, c, costs) for c in schedules.all_schedules(n)]
        assert len(every) == 2 ** (n - 1)
        assert schedules.optimal(sizes, costs).peak == min(o.peak for o in every)
        for outcome in schedules.frontier(
            sizes, costs
        ):  # each entry is real and best for its last checkpoint
            assert schedules.simulate(sizes, outcome.checkpoints, costs) == outcome
            last = max(outcome.checkpoints, default=0)
            assert outcome.peak == min(o.peak for o in every if max(o.checkpoints, default=0) == last)


def test_the_simulator_on_a_uniform_chain_by_hand():
    sizes = [1.0] * 16
    assert schedules.simulate(sizes, ()) == schedules.Outcome((), 16.0, 0.0)  # plain autograd
    # √n: 3 checkpoints held + 4 activations + the waiting gradient while segment 3 is recomputed
    assert schedules.simulate(sizes, schedules.sqrt_checkpoints(16)) == schedules.Outcome(
        (4, 8, 12), 7.0, 12.0
    )
    best = schedules.optimal(sizes)
    assert best.peak == 6.0 and list(itertools.pairwise([0, *best.checkpoints, 16])) == [
        (0, 5),
        (5, 9),
        (9, 12),
        (12, 14),
        (14, 16),
    ]
    assert schedules.even_checkpoints(16, 5) == (3, 6, 9, 12)  # checkpoint_sequential: the rest goes last
    with pytest.raises(ValueError):
        schedules.simulate(sizes, (0, 4))
    with pytest.raises(ValueError):
        schedules.even_checkpoints(4, 5)


def _measured_peak(layers, x, grad, checkpoints) -> int:
    def step():
        x.grad = None
        for p in layers.parameters():
            p.grad = None
        h, bounds = x, [0, *checkpoints, len(layers)]
        for start, end in itertools.pairwise(bounds[:-1]):
            h = checkpoint(layers[start:end], h, use_reentrant=False)
        layers[bounds[-2] :](h).backward(grad)

    step()  # warm-up: on a GPU the first checkpointed step makes one-off buffers (about 1 MiB on an H100)
    return measure.peak_memory_bytes(step)


def test_the_simulator_predicts_measured_peaks_within_a_constant():
    """For every checkpointed schedule, measured minus simulated is the same few activations (buffers inside a
    layer, parameter gradients): the model ranks schedules as the measurement does."""
    n, rows, width = 12, 512, 32
    activation = rows * width * 4
    layers = recompute.chain(n, width, device=DEVICE)
    x = torch.randn(rows, width, device=DEVICE, requires_grad=True)
    grad = torch.randn_like(x)
    plain = _measured_peak(layers, x, grad, ())
    assert n * activation <= plain <= (n + 3) * activation
    gaps = []
    for c in [(6,), (4, 8), (3, 6, 9), (2, 4, 6, 8, 10), schedules.optimal([1.0] * n).checkpoints]:
        simulated = schedules.simulate([1.0] * n, c).peak * activation
        gaps.append((_measured_peak(layers, x, grad, c) - simulated) / activation)
    assert all(0 <= gap <= 4 for gap in gaps) and max(gaps) - min(gaps) <= 0.5, gaps


# --- saved_bytes ---------------------------------------------------------------------------------------------


def _saved_by_nodes(output, module) -> int:
    """The same count as `saved_bytes`, found independently: walk the graph's `_saved_*` attributes."""
    state = {t.untyped_storage().data_ptr() for t in [*module.parameters(), *module.buffers()]}
    storages, seen, todo = {}, set(), [output.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        for attr in dir(node):
            value = getattr(node, attr) if attr.startswith("_saved_") else None
            if isinstance(value, torch.Tensor) and value.untyped_storage().data_ptr() not in state:
                storages[value.untyped_storage().data_ptr()] = value.untyped_storage().nbytes()
        todo += [child for child, _ in node.next_functions]
    return sum(storages.values())


@pytest.mark.parametrize("kind", sorted(recompute.STORAGE_LAYERS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("x_grad", [True, False])
def test_the_judges_byte_counts_are_what_pytorch_saves(kind, dtype, x_grad):
    rows, width_in, width_out = 11, 7, 5
    state = recompute.storage_state(kind, width_in, width_out, torch.Generator().manual_seed(1))
    module = recompute.storage_layer(kind, width_in, width_out, state, dtype, DEVICE)
    x = torch.randn(rows, width_in, device=DEVICE, dtype=dtype, requires_grad=x_grad)
    expected = (
        recompute.STORAGE_LAYERS[kind].activation_elements(rows, width_in, width_out, x_grad)
        * x.element_size()
    )
    assert reference.saved_bytes(module, x) == expected
    out = module(x)
    assert (_saved_by_nodes(out, module) if out.grad_fn else 0) == expected


# --- checkpointed_forward ------------------------------------------------------------------------------------


def _compare_with_plain(n, segments, p, x_grad, sequential):
    layers = recompute.chain(n, 9, p, device=DEVICE)
    x, grad = torch.randn(13, 9, device=DEVICE), torch.randn(13, 9, device=DEVICE)
    torch.manual_seed(3)
    ref_out, ref_dx, ref_grads = recompute.plain_step(layers, x.clone().requires_grad_(x_grad), grad)
    ref_draws = torch.rand(4, device=DEVICE)
    for q in layers.parameters():
        q.grad = None
    leaf = x.clone().requires_grad_(x_grad)
    torch.manual_seed(3)
    with recompute.no_torch_checkpoint():
        out = reference.checkpointed_forward(layers if sequential else list(layers), leaf, segments)
        out.backward(grad)
    assert torch.allclose(out, ref_out, atol=1e-6)
    assert (leaf.grad is None) if not x_grad else torch.allclose(leaf.grad, ref_dx, atol=1e-6)
    for q, ref in zip(layers.parameters(), ref_grads, strict=True):
        assert torch.allclose(q.grad, ref, atol=1e-6)
    assert torch.equal(torch.rand(4, device=DEVICE), ref_draws)


@pytest.mark.parametrize("p", [0.0, 0.4])
@pytest.mark.parametrize("x_grad", [True, False])
def test_reference_checkpointing_matches_plain_autograd(p, x_grad):
    for segments in (1, 2, 3, 7):
        _compare_with_plain(7, segments, p, x_grad, sequential=segments % 2 == 0)


def test_without_restoring_the_random_state_dropout_gradients_differ():
    """The dropout property discriminates: a recomputation that draws fresh masks changes the gradients."""
    layers = recompute.chain(4, 9, 0.5, device=DEVICE)
    x, grad = torch.randn(13, 9, device=DEVICE, requires_grad=True), torch.randn(13, 9, device=DEVICE)
    torch.manual_seed(0)
    _, dx, _ = recompute.plain_step(layers, x, grad)
    dx = dx.clone()
    x.grad = None
    torch.manual_seed(0)
    checkpoint(layers, x, use_reentrant=False, preserve_rng_state=False).backward(grad)
    assert not torch.allclose(x.grad, dx, atol=1e-3)


@pytest.mark.parametrize("n, segments", [(24, 4), (32, 8)])
def test_reference_checkpointing_keeps_the_judges_memory_bound(n, segments, student_module):
    params = [t.to(DEVICE) for _ in range(n) for t in (torch.randn(64, 64) / 8, torch.randn(64) / 10)]
    x, grad = torch.randn(1801, 64, device=DEVICE), torch.randn(1801, 64, device=DEVICE)
    *_, plain, peak = checkpoint_memory("checkpointed_forward", segments, x, grad, *params)
    assert plain >= n * 1801 * 64 * 4  # plain autograd keeps one activation per layer at least
    assert peak <= 0.55 * plain, (peak / plain, "0.41–0.48 is measured; the judge allows 0.6")
    student_module.checkpointed_forward = lambda layers, h, k: torch.nn.Sequential(*layers)(
        h
    )  # no checkpoints
    *_, plain_again, unsaved = checkpoint_memory("checkpointed_forward", segments, x, grad, *params)
    assert unsaved > 0.9 * plain_again  # without checkpoints the bound fails


def test_no_torch_checkpoint_refuses_every_way_in():
    layers = recompute.chain(4, 8)
    x = torch.randn(3, 8, requires_grad=True)
    with recompute.no_torch_checkpoint():
        for call in (
            lambda: checkpoint(layers, x, use_reentrant=False),
            lambda: checkpoint(layers, x, use_reentrant=True),
            lambda: checkpoint_sequential(layers, 2, x, use_reentrant=False),
        ):
            with pytest.raises(AssertionError, match="torch.utils.checkpoint"):
                call()
    checkpoint(layers, x, use_reentrant=False).sum().backward()  # restored afterwards


def _recomputed_by(run, n, segments):
    layers = recompute.chain(n, 5)
    x = torch.randn(3, 5, requires_grad=True)
    ran = recompute.watch_layers(layers)
    out = run(layers, x, segments)
    forward_calls = len(ran)
    out.sum().backward()
    return ran[forward_calls:]


@pytest.mark.parametrize("n, segments", [(7, 1), (7, 3), (7, 7), (11, 4), (11, 9), (9, 7)])
def test_the_segments_are_read_from_what_backward_runs_again(n, segments):
    """The reference (lengths at most one apart, every segment checkpointed) and torch's checkpoint_sequential
    (⌊n/k⌋ layers a segment, the remainder and the last segment run normally) read back as they are built."""
    with recompute.no_torch_checkpoint():
        recomputed = _recomputed_by(reference.checkpointed_forward, n, segments)
    lengths = recompute.segment_lengths(n, recomputed)
    assert len(lengths) == segments and max(lengths) - min(lengths) <= 1 and sum(lengths) == n
    recomputed = _recomputed_by(
        lambda layers, x, k: checkpoint_sequential(layers, k, x, use_reentrant=False), n, segments
    )
    size = n // segments
    assert recompute.segment_lengths(n, recomputed) == [size] * (segments - 1) + [n - size * (segments - 1)]


def test_segment_lengths_refuses_what_is_not_one_run_per_segment():
    assert recompute.segment_lengths(6, []) == [6]  # nothing recomputed: one segment run normally
    assert recompute.segment_lengths(6, [3, 4, 5, 0, 1, 2]) == [3, 3]
    assert recompute.segment_lengths(6, [3, 4, 0, 1, 2, 0, 1, 2]) is None  # a segment run twice
    assert recompute.segment_lengths(6, [4, 5, 0, 1]) is None  # layers 2 and 3 never run again
    assert recompute.segment_lengths(3, [2, 3, 0, 1]) is None  # a layer beyond the chain


# --- attention_backward_from_lse -----------------------------------------------------------------------------


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize(
    "dtype, tol", [(torch.float32, 2e-4), (torch.bfloat16, 3e-2), (torch.float64, 1e-5)], ids=str
)
def test_reference_backward_from_lse_matches_float64_autograd(is_causal, dtype, tol):
    for n_q, n_k in [(37, 37), (21, 67), (67, 9)]:
        q, k, v = grading.random_qkv(2, n_q, n_k, 16, dtype=dtype, device=DEVICE, requires_grad=False)
        out, lse = grading.reference_attention(q, k, v, is_causal=is_causal)
        d_out = torch.randn_like(q)
        grads = reference.attention_backward_from_lse(q, k, v, out.to(dtype), lse.float(), d_out, is_causal)
        expected = grading.reference_gradients(q, k, v, d_out, is_causal=is_causal)
        for grad, ref, inp in zip(grads, expected, (q, k, v), strict=True):
            assert grad.dtype == inp.dtype
            grading.assert_close(grad, ref, "gradient", atol=tol, rtol=tol)


def test_the_precision_tolerances_separate_float32_arithmetic_from_bfloat16_and_float64_from_float32():
    """The judge's bfloat16 and float64 cases, against the formulas in float64: the reference (computing in at
    least float32) passes; the same computation done in the inputs' dtype (bfloat16) or in float32 (float64
    inputs) fails."""

    def computed_in(dtype):
        def backward(*args):
            grads = reference.attention_backward_from_lse(*(t.to(dtype) for t in args[:6]), args[6])
            return tuple(g.to(args[0].dtype) for g in grads)

        return backward

    for seed, (dtype, low) in itertools.product(
        range(3), [(torch.bfloat16, torch.bfloat16), (torch.float64, torch.float32)]
    ):
        q, k, v = grading.random_qkv(2, 97, 81, 64, dtype=dtype, requires_grad=False, seed=seed)
        out, lse = grading.reference_attention(q, k, v)
        inputs = (q, k, v, out.to(dtype), lse.float(), torch.randn_like(q), False)
        expected = reference.attention_backward_from_lse(*(t.double() for t in inputs[:6]), False)
        tolerance = unit05.FORMULA_TOLERANCE[dtype]
        for grad, ref in zip(reference.attention_backward_from_lse(*inputs), expected, strict=True):
            grading.assert_close(grad, ref, "reference", **tolerance)
        lowered = computed_in(low)(*inputs)
        assert any(
            not torch.allclose(grad.double(), ref, **tolerance)
            for grad, ref in zip(lowered, expected, strict=True)
        ), (dtype, low)


def _judged_calls(grade_id: str, seeds=(0, 1)) -> list[tuple[str, tuple]]:
    """Every call the judge makes for one graded cell, over a few seeds (its random choices differ)."""
    unit = units.UNITS[NOTEBOOK.name]
    return [call for seed in seeds for call in recorded_calls(unit, grade_id, None, seed=seed)]


def _dtype(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def test_exercise_1_states_the_inputs_its_judge_sends():
    calls = _judged_calls("test_saved_bytes")  # storage(target, kind, width_out, x_grad, x, *state)
    text = exercise_text(NOTEBOOK, "saved_bytes")
    assert {_dtype(args[4]) for _, args in calls} == dtypes_stated(text)
    assert {args[3] for _, args in calls} == {True, False} and "may or may not need a gradient" in text


def test_exercise_2_states_the_cases_its_judge_checks():
    text = exercise_text(NOTEBOOK, "checkpointed_forward")
    gradients = [args for target, args in _judged_calls("test_checkpoint_gradients")]
    # checkpoint_gradients(target, seed, segments, p, container, x_grad, x, grad, *params)
    assert {args[4] for args in gradients} == {"list", "Sequential"} and "`nn.Sequential`" in text
    assert {args[5] for args in gradients} == {True, False} and "an `x` that needs no gradient" in text
    assert any(args[3] > 0 for args in gradients) and "dropout" in text
    layers_and_segments = {(len(args[8:]) // 2, args[2]) for args in gradients}
    assert {1} <= {s for _, s in layers_and_segments} and any(n == s for n, s in layers_and_segments)
    assert "1 ≤ `segments` ≤ `len(layers)`" in text and "lengths differ by at most one" in text
    assert {_dtype(args[6]) for args in gradients} == {"float32"} and "float32 rounding" in text
    memory = {(len(args[4:]) // 2, args[1]) for target, args in _judged_calls("test_checkpoint_memory")}
    assert memory == {(24, 4), (32, 8)} and "24 `recompute.Block` layers in 4 segments and 32 in 8" in text
    assert f"at most {unit05.MEMORY_RATIO} times plain autograd's" in text


def test_exercise_3_states_the_dtypes_and_shapes_its_judge_sends():
    text = exercise_text(NOTEBOOK, "attention_backward_from_lse")
    calls = _judged_calls("test_backward_lse") + _judged_calls("test_backward_lse_causal")
    dtypes = set()
    for _, (q, k, v, out, lse, d_out, _) in calls:
        batch, n_q, d = q.shape
        n_k = k.shape[1]
        assert k.shape == v.shape == (batch, n_k, d) and out.shape == d_out.shape == q.shape
        assert lse.shape == (batch, n_q) and lse.dtype == torch.float32  # "L is float32 of shape (B, Nq)"
        assert k.dtype == v.dtype == out.dtype == d_out.dtype == q.dtype  # "share one dtype"
        dtypes.add(_dtype(q))
    assert dtypes == dtypes_stated(text) == {"float32", "bfloat16", "float64"}
    assert "L is float32 of shape (B, Nq)" in text and "share one dtype: float32, bfloat16 or float64" in text
    for causal in (False, True):
        shapes = {(q.shape[1], k.shape[1]) for _, (q, k, *_, c) in calls if c == causal}
        assert any(a < b for a, b in shapes) and any(a > b for a, b in shapes)  # "Nq may differ from Nk"
    assert "Nq may differ from Nk" in text and "top-left aligned, also when Nq ≠ Nk" in text


# --- the child's entry points and the judge -----------------------------------------------------------------


@pytest.fixture
def student_module(monkeypatch):
    student = types.ModuleType(MODULE_NAME)
    student.saved_bytes = reference.saved_bytes
    student.checkpointed_forward = reference.checkpointed_forward
    student.detached = lambda layers, x, segments: torch.nn.Sequential(*layers)(x).detach()
    monkeypatch.setitem(sys.modules, MODULE_NAME, student)
    return student


def test_the_childs_entry_points_report_what_the_judge_reads(student_module):
    g = torch.Generator().manual_seed(0)
    state = recompute.storage_state("Gated", 6, 4, g)
    assert storage("saved_bytes", "Gated", 4, True, torch.randn(5, 6), *state) == 5 * (6 + 8) * 4
    params = [t for _ in range(5) for t in (torch.randn(8, 8), torch.randn(8))]
    x, grad = torch.randn(6, 8), torch.randn(6, 8)
    out, dx, grads, draws, recomputed = checkpoint_gradients(
        "checkpointed_forward", 7, 2, 0.3, "list", False, x, grad, *params
    )
    assert out.shape == (6, 8) and dx is None and len(grads) == 10 and all(g is not None for g in grads)
    assert draws.shape == (DRAWS,)
    assert recomputed == (3, 4, 0, 1, 2)  # segments [0, 1, 2] and [3, 4], the last run again first
    with pytest.raises(AssertionError, match="not differentiable"):
        checkpoint_gradients("detached", 7, 2, 0.0, "Sequential", True, x, grad, *params)
    with pytest.raises(AssertionError, match="torch.utils.checkpoint"):
        student_module.checkpointed_forward = lambda layers, h, k: checkpoint_sequential(
            layers, k, h, use_reentrant=False
        )
        checkpoint_gradients("checkpointed_forward", 7, 2, 0.0, "Sequential", True, x, grad, *params)


def test_the_judge_gives_the_solution_full_marks_and_a_reentrant_mistake_partial_credit():
    unit = units.UNITS[NOTEBOOK.name]
    summary = preprocessor.judge_notebook(notebooks.read(NOTEBOOK), unit, "alice", "salt", "auto")
    assert all(score == points for score, points in summary["scores"].values()), summary
    assert not summary["flagged"], summary["reasons"]
    impl = wrong.parse(ROOT / "course" / "wrong" / "05_recomputation" / "checkpoint_reentrant_input_only.py")
    nb = notebooks.with_cell(notebooks.read(NOTEBOOK), impl.replaces, impl.body)
    scores = preprocessor.judge_notebook(nb, unit, "alice", "salt", "auto")["scores"]
    assert 0 < scores["test_checkpoint_gradients"][0] < scores["test_checkpoint_gradients"][1]
    assert scores["test_checkpoint_memory"] == [2.0, 2.0] and scores["test_saved_bytes"] == [2.0, 2.0]
    cell = next(c for c in nb.cells if notebooks.meta(c).get("grade_id") == "test_checkpoint_gradients")
    assert (
        "✗  x 不需要梯度时参数仍有梯度" in cell.outputs[0].text
        and "not differentiable" in cell.outputs[0].text
    )


@pytest.mark.gpu
def test_the_memory_bound_holds_on_the_gpu_allocator(student_module):
    """On the GPU the judge reads torch.cuda.max_memory_allocated: the reference stays below 0.6 × plain."""
    params = [t.cuda() for _ in range(24) for t in (torch.randn(64, 64) / 8, torch.randn(64) / 10)]
    x, grad = torch.randn(2001, 64, device="cuda"), torch.randn(2001, 64, device="cuda")
    *_, plain, peak = checkpoint_memory("checkpointed_forward", 4, x, grad, *params)
    assert plain >= 24 * 2001 * 64 * 4 and peak <= 0.6 * plain, (plain, peak)
