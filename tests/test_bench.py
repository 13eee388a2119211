"""The benchmark suite (`benchmarks/`, `python -m course bench`): checks before timing, statuses, report.

On the CPU everything runs on tiny grids through the Triton interpreter (a few seconds per test).
"""

import dataclasses
import json
import math

import pytest
import torch

import utils
from benchmarks import attention, report
from benchmarks.implementations import IMPLEMENTATIONS, Implementation, Unavailable
from course import cli
from utils.attention.naive import naive_attention
from utils.grading import random_qkv, reference_attention, reference_gradients
from utils.measure import attention_flops

TINY = dataclasses.replace(attention.CPU_GRID, ns=(40,), head_dims=(16,), tokens=80, memory_ns=(32, 64, 128))


class _DoubledGradients(torch.autograd.Function):
    """Correct forward, every gradient twice too large: only a gradient check can catch it."""

    @staticmethod
    def forward(ctx, out):
        return out.clone()

    @staticmethod
    def backward(ctx, grad):
        return 2 * grad


def _wrong_scale(q, k, v, is_causal):
    return naive_attention(q, k, v, is_causal=is_causal, scale=1.0)


def _nan(q, k, v, is_causal):
    return naive_attention(q, k, v, is_causal=is_causal) * float("nan")


def _wrong_backward(q, k, v, is_causal):
    return _DoubledGradients.apply(naive_attention(q, k, v, is_causal=is_causal))


def _add(monkeypatch, *impls: Implementation) -> list[str]:
    for impl in impls:
        monkeypatch.setitem(IMPLEMENTATIONS, impl.name, impl)
    return [impl.name for impl in impls]


def test_cli_runs_the_suite_and_writes_results_and_figures(tmp_path, capsys):
    argv = [
        "bench",
        "--out",
        str(tmp_path),
        "--ns",
        "40",
        "--head-dims",
        "16",
        "--memory-ns",
        "32",
        "64",
        "128",
    ]
    code = cli.main(argv)
    printed = capsys.readouterr().out
    assert code == 0, printed
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    env = results["environment"]
    assert env["device"] == utils.mode().name and env["torch"] == torch.__version__ and env["date"]
    records = results["records"]
    assert {(r["name"], r["mode"], r["causal"]) for r in records} == {
        (name, mode, causal)
        for name in IMPLEMENTATIONS
        for mode in attention.MODES
        for causal in (False, True)
    }
    for r in records:
        assert r["status"] in attention.STATUSES
        if r["name"] in ("triton", "pytorch", "naive"):
            assert r["status"] == "ok", r
        if r["status"] == "ok":
            flops = attention_flops(
                r["batch"] * r["heads"], r["n"], r["n"], r["d"], r["causal"], r["mode"] == "fwd_bwd"
            )
            assert r["tflops"] == pytest.approx(flops / (r["time_ms"] * 1e-3) / 1e12)
            assert 0 <= max(r["error_vs_tolerance"].values()) <= 1
            assert set(r["error_vs_tolerance"]) == (
                {"O", "dQ", "dK", "dV"} if r["mode"] == "fwd_bwd" else {"O"}
            )
        else:
            assert r["status"] == "unavailable" and r["name"].startswith("sdpa") and r["reason"]
            assert r["time_ms"] is None and r["tflops"] is None
    flash = [r for r in records if r["name"] == "sdpa_flash" and r["status"] == "ok"]
    assert all(r["ratio_vs_sdpa_flash"] == pytest.approx(1.0) for r in flash)
    assert {(m["name"], m["n"]) for m in results["memory"] if m["status"] == "ok"} >= {
        (name, n) for name in ("triton", "naive") for n in (32, 64, 128)
    }
    assert results["summary"] and results["targets"]
    for name in ("fwd.png", "fwd_bwd.png", "memory.png"):
        assert (tmp_path / name).stat().st_size > 10_000
    assert "Speed ratios vs SDPA flash" in printed
    if not utils.mode().is_gpu:
        assert "NOT meaningful" in printed and "not meaningful" in results["grid"]["label"].lower()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_wrong_results_are_recorded_and_never_timed(tmp_path, monkeypatch, dtype):
    names = _add(
        monkeypatch,
        Implementation("wrong_scale", "softmax scale 1 instead of 1/sqrt(d)", _wrong_scale),
        Implementation("nan", "NaN everywhere", _nan),
        Implementation("wrong_backward", "gradients doubled", _wrong_backward),
    )
    grid = dataclasses.replace(TINY, dtype=dtype)
    results = attention.run_suite(
        grid, ["naive", "sdpa_flash", *names], tmp_path, memory=False, progress=False
    )
    by = {(r["name"], r["mode"], r["causal"]): r for r in results["records"]}
    for causal in (False, True):
        for mode in attention.MODES:
            assert by["naive", mode, causal]["status"] == "ok"
            assert by["sdpa_flash", mode, causal]["status"] in ("ok", "unavailable")
            for name in ("wrong_scale", "nan"):
                record = by[name, mode, causal]
                assert record["status"] == "wrong" and record["time_ms"] is None and record["tflops"] is None
                assert record["error_vs_tolerance"]["O"] is None or record["error_vs_tolerance"]["O"] > 1
            assert by["wrong_scale", "fwd", causal]["reason"].startswith("O:")
            assert "NaN" in by["nan", mode, causal]["reason"]
        assert by["wrong_backward", "fwd", causal]["status"] == "ok"
        backward = by["wrong_backward", "fwd_bwd", causal]
        assert backward["status"] == "wrong" and backward["reason"][:2] in ("dQ", "dK", "dV")
        assert backward["error_vs_tolerance"]["O"] <= 1 < backward["error_vs_tolerance"]["dV"]


def test_command_exits_non_zero_when_an_implementation_is_wrong(tmp_path, monkeypatch):
    names = _add(monkeypatch, Implementation("wrong_scale", "softmax scale 1", _wrong_scale))
    argv = [
        "bench",
        "--out",
        str(tmp_path),
        "--ns",
        "24",
        "--head-dims",
        "16",
        "--modes",
        "fwd",
        "--no-memory",
    ]
    assert cli.main([*argv, "--impls", "naive", *names]) == 1
    assert cli.main([*argv, "--impls", "naive", "--no-figures"]) == 0


def test_failures_get_their_status_and_the_memory_sweep_stops_at_the_first(monkeypatch):
    def out_of_memory_above_64(q, k, v, is_causal):
        if q.shape[-2] > 64:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")
        return naive_attention(q, k, v, is_causal=is_causal)

    def unavailable(q, k, v, is_causal):
        raise Unavailable("no kernel here")

    def broken(q, k, v, is_causal):
        raise RuntimeError("boom\nsecond line")

    impls = [
        Implementation("ooms", "out of memory above N=64", out_of_memory_above_64),
        Implementation("missing", "never available", unavailable),
        Implementation("broken", "raises", broken),
    ]

    class Bar:
        def set_postfix_str(self, text):
            pass

        def update(self, steps=1):
            pass

    records = attention.memory_sweep(impls, TINY, Bar())
    assert [(r["name"], r["n"], r["status"]) for r in records] == [
        ("ooms", 32, "ok"),
        ("ooms", 64, "ok"),
        ("ooms", 128, "oom"),
        ("missing", 32, "unavailable"),
        ("broken", 32, "error"),
    ]
    assert records[0]["peak_memory_bytes"] > 0 and records[2]["peak_memory_bytes"] is None
    assert records[3]["reason"] == "no kernel here" and records[4]["reason"] == "RuntimeError: boom"


def test_error_vs_tolerance_scales_with_each_row_but_never_below_the_tensor():
    tol = float(torch.rand(()) * 0.1 + 0.01)
    expected = torch.randn(2, 50, 16, dtype=torch.float64) * float(torch.rand(()) * 10 + 0.01)

    def ratio(actual):
        return attention.error_vs_tolerance(actual, expected, tol)

    relative = torch.rand_like(expected) * 2 - 1
    assert ratio(expected * (1 + 0.5 * tol * relative)) <= 0.5
    pushed = expected.clone()
    pushed.view(-1)[int(torch.randint(expected.numel(), ()))] += 6 * tol * expected.abs().max()
    assert ratio(pushed) > 1
    assert ratio(torch.zeros_like(expected)) > 1  # an all-zero output fails wherever the reference is small
    nan = expected.clone()
    nan[0, 0, 0] = float("nan")
    assert math.isinf(ratio(nan))

    big, tiny = 1, 2  # a row 100× the others (early causal rows) and a row of zeros (cancellation)
    expected[0, big] *= 100
    expected[1, tiny] = 0
    row_rms = expected[0, big].square().mean().sqrt()
    tensor_rms = expected.square().mean().sqrt()
    noisy = expected.clone()
    noisy[0, big] += 0.5 * tol * row_rms * relative[0, big]  # errors the size of the row: accepted
    noisy[1, tiny] += 0.5 * tol * tensor_rms * relative[1, tiny]  # a zero row is held to the tensor's scale
    assert ratio(noisy) <= 0.5
    noisy[1, tiny, 0] = 3 * tol * tensor_rms
    assert ratio(noisy) > 1


def test_reference_in_chunks_equals_the_grading_reference(monkeypatch):
    monkeypatch.setattr(attention, "REFERENCE_BYTES", 1)  # one head at a time
    q, k, v = random_qkv((2, 3), 33, 33, 16, requires_grad=False)
    grad_out = torch.randn_like(q)
    causal = bool(torch.randint(2, ()))
    chunked = attention.reference(q, k, v, grad_out, causal, with_grads=True)
    whole = (reference_attention(q, k, v, causal)[0], *reference_gradients(q, k, v, grad_out, causal))
    for name, expected in zip(("O", "dQ", "dK", "dV"), whole, strict=True):
        torch.testing.assert_close(chunked[name], expected, rtol=1e-12, atol=1e-12)
    assert set(attention.reference(q, k, v, grad_out, causal, with_grads=False)) == {"O"}


def _synthetic(ratios: dict[int, float], mode="fwd", d=64, causal=False, status="ok") -> list[dict]:
    records = []
    for n, ratio in ratios.items():
        base = float(torch.rand(()) * 300 + 100)
        for name, tflops in (("sdpa_flash", base), ("sdpa_cudnn", 1.5 * base), ("triton", ratio * base)):
            ok = status == "ok" or name != "triton"
            records.append(
                {"name": name, "mode": mode, "d": d, "causal": causal, "n": n,
                 "status": "ok" if ok else status, "tflops": tflops if ok else None}
            )  # fmt: skip
    return records


@pytest.mark.parametrize(
    ("fwd", "fwd_bwd", "met"),
    [
        ({1024: 1.05, 4096: 1.35, 8192: 1.4, 16384: 1.3}, {4096: 1.2, 16384: 1.1}, (True, True)),
        (
            {1024: 0.95, 4096: 1.5, 8192: 1.5, 16384: 1.5},
            {4096: 1.0, 16384: 1.3},
            (False, True),
        ),  # floor; median
        ({1024: 2.0, 4096: 1.2, 8192: 1.2, 16384: 2.0}, {4096: 1.0, 16384: 1.05}, (False, False)),
    ],
)
def test_ratios_summary_and_targets(fwd, fwd_bwd, met):
    records = _synthetic(fwd) + _synthetic(fwd, causal=True) + _synthetic(fwd_bwd, mode="fwd_bwd")
    report.add_ratios(records)
    triton = [r for r in records if r["name"] == "triton"]
    assert all(r["ratio_vs_sdpa_cudnn"] == pytest.approx(r["ratio_vs_sdpa_flash"] / 1.5) for r in triton)
    summary = report.summarize(records, min_n=4096)
    row = next(r for r in summary if (r["name"], r["mode"], r["causal"]) == ("triton", "fwd", False))
    large = sorted(ratio for n, ratio in fwd.items() if n >= 4096)
    assert row["median_ratio_vs_sdpa_flash"] == pytest.approx(large[len(large) // 2])
    assert row["min_ratio_vs_sdpa_flash"] == pytest.approx(min(fwd.values()))
    targets = report.evaluate_targets(summary, [], min_n=4096)
    assert tuple(t["met"] for t in targets) == met


def test_a_wrong_point_fails_the_target_whatever_the_speed():
    records = _synthetic({4096: 2.0, 8192: 2.0}) + _synthetic({16384: 2.0}, status="wrong")
    report.add_ratios(records)
    summary = report.summarize(records, min_n=4096)
    row = next(r for r in summary if r["name"] == "triton")
    assert row["not_ok"] == {"16384": "wrong"}
    assert [t["met"] for t in report.evaluate_targets(summary, [], min_n=4096)] == [False]


def test_memory_target_reads_the_peak_at_128k():
    limit = report.MEMORY_TARGET["max_mib"] * report.MIB
    for peak, met in ((limit // 2, True), (limit + 1, False), (None, False)):
        record = {"name": "triton", "n": report.MEMORY_TARGET["n"], "status": "ok" if peak else "oom"}
        [target] = report.evaluate_targets([], [{**record, "peak_memory_bytes": peak}], min_n=4096)
        assert target["met"] is met


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("ns", [0], "N"),
        ("memory_ns", [], "N"),
        ("head_dims", [48], "48"),
        ("modes", ["bwd"], "bwd"),
        ("dtype", "int8", "int8"),
    ],
)
def test_bad_grid_options_are_refused_clearly(option, value, words):
    with pytest.raises(ValueError, match=words) as error:
        attention.customise(attention.CPU_GRID, **{option: value})
    assert " / " in str(error.value)  # bilingual


def test_unknown_implementation_is_refused(tmp_path, capsys):
    assert cli.main(["bench", "--out", str(tmp_path), "--impls", "flash3"]) == 2
    assert "flash3" in capsys.readouterr().out


@pytest.mark.gpu
def test_gpu_suite_times_checked_kernels(tmp_path):
    grid = dataclasses.replace(attention.GPU_GRID, ns=(1024,), head_dims=(64,), memory_ns=(1024, 4096))
    results = attention.run_suite(grid, ["triton", "sdpa_flash", "naive"], tmp_path, progress=False)
    for r in results["records"]:
        assert r["status"] == "ok", r
        assert r["tflops"] > 1
    memory = {r["name"]: r["peak_memory_bytes"] for r in results["memory"] if r["n"] == 4096}
    assert memory["triton"] < memory["naive"] / 4


def test_the_profile_summary_reads_the_committed_nsight_compute_csv():
    """The H100 profile of issue 21: one column per launch, in launch order, with the numbers the README quotes."""
    from pathlib import Path

    from benchmarks import hopper_profile

    table = hopper_profile.summarize(Path("benchmarks/results/h100/hopper/profile/d64_causal.csv"))
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ")[1:] for line in table.splitlines()[2:]}
    assert len(rows["kernel"]) == len(hopper_profile.LABELS)
    assert "hopper_forward_kernel" in rows["kernel"][2] and "cudnn" in rows["kernel"][0]
    assert rows["achieved occupancy %"][2].startswith("6.25")  # one 4-warp program per SM: 4 of 64 warps
    assert rows["time (µs)"][0] == "783.8"  # ncu wrote 783,840 ns (issue 47: the µs row held ns)
    tensor = next(cells for name, cells in rows.items() if "tensor_op_hmma_cycles" in name)
    assert all(not cell.startswith("0 ") for cell in tensor)
    assert not any("dmma" in name or "imma" in name for name in rows)  # unused pipes are left out
    assert rows["top warp stalls (cycles per issued instruction)"][0].count(",") == 3


def test_the_backward_profile_labels_each_kernel_by_its_name():
    """The H200 backward profile of issue 49: one column per kernel, cuDNN's first, then the course's three."""
    from pathlib import Path

    from benchmarks import backward_profile, hopper_profile

    path = Path("benchmarks/results/h200/backward/profile_d64.csv")
    labels = backward_profile.kernel_labels(path)
    assert labels[-3:] == ("preprocess_kernel", "dkdv_kernel", "dq_kernel")
    assert any("cudnn" in label for label in labels[:-3])
    table = hopper_profile.summarize(path, labels)
    assert table.splitlines()[0] == "| | " + " | ".join(labels) + " |"


def test_the_backward_targets_count_every_path_and_fail_on_a_wrong_point(tmp_path):
    from benchmarks import backward

    def record(n, two, one):
        return {"dtype": "bfloat16", "d": 64, "causal": True, "n": n, "cudnn_ms": 1.0,
                "two_kernels": {"status": "ok", "ms": 1 / two, "vs_cudnn": two}, "one_pass": one}  # fmt: skip

    records = [record(1024, 1.1, {"status": "ok", "vs_cudnn": 0.95}), record(2048, 0.95, {"status": "wrong"})]
    two = backward.targets(records, "two_kernels")
    assert two["median_vs_cudnn"] == pytest.approx(1.025) and two["min_vs_cudnn"] == 0.95
    assert two["median_met"] and two["min_met"] and two["wrong_points"] == 0
    one = backward.targets(records, "one_pass")
    assert one["wrong_points"] == 1 and not one["median_met"] and not one["min_met"]
    backward.figure(records, tmp_path / "backward.png")
    assert (tmp_path / "backward.png").stat().st_size > 10_000 and list(tmp_path.iterdir()) == [
        tmp_path / "backward.png"
    ]


def test_the_leaderboard_call_is_checked_then_timed_in_parts_and_a_wrong_backward_is_not_timed(
    tmp_path, monkeypatch
):
    from benchmarks import leaderboard

    names = _add(monkeypatch, Implementation("wrong_backward", "gradients doubled", _wrong_backward))
    results = leaderboard.run(tmp_path, ("sdpa_flash", *names))
    ok, wrong = results["records"]["sdpa_flash"], results["records"]["wrong_backward"]
    assert ok["status"] == "ok" and max(ok["error_vs_tolerance"].values()) <= 1
    assert all(ok[part] > 0 for part in ("whole_ms", "forward_ms", "backward_ms"))
    assert wrong["status"] == "wrong" and "whole_ms" not in wrong
    assert wrong["error_vs_tolerance"]["O"] <= 1 < wrong["error_vs_tolerance"]["dQ"]
    assert json.loads((tmp_path / "leaderboard.json").read_text())["call"].endswith("o.sum().backward()")
    assert "wrong_backward wrong" in leaderboard.format_table(results)


@pytest.mark.gpu
def test_the_leaderboard_call_on_a_gpu_splits_the_kernels_from_the_rest(tmp_path):
    from benchmarks import leaderboard

    results = leaderboard.run(tmp_path, ("triton", "sdpa_flash"))
    for record in results["records"].values():
        assert record["status"] == "ok", record
        assert 0 < record["kernels_ms"] <= record["whole_ms"] and record["kernels"]
        assert record["forward_ms"] < record["whole_ms"]
