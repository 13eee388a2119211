"""The judge: plain-data tensors, the scan, the sandbox, the child's failures, seeds and unit 06's verdicts."""

import os
import shutil
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest
import torch

from course import ROOT, notebooks, wrong
from course.judge import preprocessor, sandbox, student_code, triton_calls, units
from course.judge.child import CallFailed, Child, read_plain
from course.judge.core import Cell, Judgement, seed_for
from utils import tensor_files

UNIT06 = ROOT / "source" / "06_flash_attention_pytorch" / "flash_attention_pytorch.ipynb"


def test_tensors_round_trip_as_plain_data(tmp_path):
    tensors = {
        "bf16": torch.randn(3, 5).bfloat16(),
        "f64": torch.randn(2, 1, 4, dtype=torch.float64),
        "empty": torch.empty(0, 7),
        "scalar": torch.tensor(3.5),
        "mask": torch.rand(4, 4) > 0.5,
        "strided": torch.randn(6, 4).t(),
    }
    tensor_files.save(tensors, tmp_path / "t")
    back = tensor_files.load(tmp_path / "t")
    assert back.keys() == tensors.keys()
    for name, tensor in tensors.items():
        assert back[name].dtype == tensor.dtype and torch.equal(back[name], tensor), name


def test_a_malformed_header_is_refused(tmp_path):
    tensor_files.save({"x": torch.ones(4)}, tmp_path / "t")
    (tmp_path / "t.json").write_text(
        '{"x": {"dtype": "float32", "shape": [400], "offset": 0, "bytes": 1600}}'
    )
    with pytest.raises(ValueError):
        tensor_files.load(tmp_path / "t")
    (tmp_path / "t.json").write_text('{"x": {"dtype": "object", "shape": [4], "offset": 0, "bytes": 16}}')
    with pytest.raises(ValueError):
        tensor_files.load(tmp_path / "t")


def test_answers_are_never_read_through_a_link(tmp_path):
    (tmp_path / "secret").write_text("{}")
    (tmp_path / "answer").symlink_to(tmp_path / "secret")
    with pytest.raises(OSError):
        read_plain(tmp_path / "answer", 100)


def kinds(source: str, banned=()) -> set[tuple[str, str]]:
    return {(f.kind, f.what) for f in student_code.scan(source, list(banned))}


def test_scan_finds_library_attention_however_it_is_named():
    assert ("attention", "scaled_dot_product_attention") in kinds(
        "from torch.nn.functional import scaled_dot_product_attention as f"
    )
    assert ("attention", "scaled_dot_product_attention") in kinds(
        "f = getattr(torch.nn.functional, 'scaled_dot_product_attention')"
    )
    assert ("attention", "_flash_attention") in kinds(
        "torch.ops.aten._scaled_dot_product_flash_attention(q, k, v)"
    )
    assert ("attention", "reference_attention") in kinds(
        "from utils.grading import reference_attention as r", ["utils.grading:reference_attention"]
    )


def test_scan_accuses_no_one_for_words_in_docstrings_or_own_names():
    source = 'def attention_tile(q):\n    """Unlike scaled_dot_product_attention, tiled."""\n    return q\n'
    assert kinds(source, ["utils.grading:reference_attention"]) == set()


def test_scan_flags_tampering():
    found = kinds("import sys, os\nsys.excepthook = None\nos._exit(0)\nsys.modules['x'] = 1\nopen('f')")
    assert {"sys.excepthook", "os._exit", "sys.modules", "opening files"} <= {what for _, what in found}


def test_scan_flags_patched_modules_and_threads_but_not_own_attributes():
    patched = (
        "import utils.judged_triton as judged\nfrom utils import grading\njudged.run = None\ngrading.x[0] = 1"
    )
    assert kinds(patched) == {("tampering", "patching an imported module")}
    assert ("tampering", "threads") in kinds("from concurrent.futures import ThreadPoolExecutor")
    assert ("tampering", "setattr") in kinds("import torch\nsetattr(torch, 'mm', None)")
    own = "import torch\nclass F:\n    def forward(ctx, q):\n        ctx.is_causal = True\n        q[0] = 1\n"
    assert kinds(own) == set()


def test_the_module_keeps_definitions_and_leaves_demo_calls_out():
    nb = notebooks.read(UNIT06)
    source = student_code.module_source(nb, units.UNITS[UNIT06.name].student_cells, "import torch")
    assert "def flash_forward" in source and "class FlashAttentionPyTorch" in source
    nb = notebooks.with_cell(nb, "fa_forward", "BLOCK_Q = 16\nprint('demo')\nflash_forward = None")
    source = student_code.module_source(nb, ["fa_forward"], "import torch")
    assert "BLOCK_Q = 16" in source and "print(" not in source


def test_seeds_are_reproducible_and_differ_between_students_and_cells():
    assert seed_for("s", "alice", "nb", "test_a") == seed_for("s", "alice", "nb", "test_a")
    others = {
        seed_for("s", "bob", "nb", "test_a"),
        seed_for("s", "alice", "nb", "test_b"),
        seed_for("t", "alice", "nb", "test_a"),
    }
    assert seed_for("s", "alice", "nb", "test_a") not in others and len(others) == 3


PROBE = """
import os, socket, sys
course, sibling = sys.argv[1], sys.argv[2]
print("course", os.path.exists(course))
print("sibling", os.path.exists(sibling))
print("uid", os.getuid())
try:
    os.kill(int(sys.argv[3]), 0)
    print("signal", True)
except OSError:
    print("signal", False)
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[4])), timeout=2)
    print("network", True)
except OSError:
    print("network", False)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="namespaces are Linux's")
def test_the_sandbox_hides_the_course_other_folders_processes_and_network(tmp_path):
    assert sandbox.probe()[0] == "namespaces", sandbox.probe()[1]  # CI asserts the sandbox is active
    import socket

    server = socket.create_server(("127.0.0.1", 0))
    sibling = sandbox.workspace("course-sibling-")
    work = sandbox.workspace()
    try:
        argv, env = sandbox.command(
            [
                sys.executable,
                "-c",
                PROBE,
                str(ROOT / "course"),
                str(sibling),
                str(os.getpid()),
                str(server.getsockname()[1]),
            ],
            work,
            "namespaces",
        )
        seen = dict(
            line.split()
            for line in subprocess.run(
                argv, env=env, capture_output=True, text=True, check=True
            ).stdout.splitlines()
        )
    finally:
        server.close()
        for folder in (sibling, work):
            subprocess.run(["rm", "-rf", str(folder)], check=True)
    assert seen == {
        "course": "False",
        "sibling": "False",
        "uid": "65534",
        "signal": "False",
        "network": "False",
    }


def student_module(body: str) -> str:
    return f"import torch\nimport os\n\n{body}\n"


def test_a_crash_or_a_hang_costs_one_call_and_the_next_call_runs():
    body = "def f(x, how):\n    if how == 'crash':\n        os._exit(3)\n    if how == 'hang':\n        while True:\n            pass\n    return x * 2"
    child = Child(student_module(body), {}, sandbox.probe()[0])
    try:
        with pytest.raises(CallFailed, match="exit code 3"):
            child.call("f", torch.ones(2), "crash")
        assert torch.equal(child.call("f", torch.ones(2), "ok").result, torch.full((2,), 2.0))
        with pytest.raises(CallFailed, match="timed out"):
            child.call("f", torch.ones(2), "hang", timeout=3)
        assert torch.equal(child.call("f", torch.arange(3.0), "ok").result, torch.arange(3.0) * 2)
    finally:
        child.close()


def test_an_error_names_the_students_line_and_a_ban_holds_for_aliases():
    body = "from torch.nn.functional import scaled_dot_product_attention as fast\n\ndef g(q):\n    return fast(q, q, q)\n\ndef h(q):\n    return q.undefined_method()"
    child = Child(student_module(body), {"banned": [], "ban_fused_attention": True}, sandbox.probe()[0])
    try:
        with pytest.raises(CallFailed, match="not allowed"):
            child.call("g", torch.randn(1, 4, 8))
        with pytest.raises(CallFailed, match="undefined_method"):
            child.call("h", torch.randn(2))
    finally:
        child.close()


def test_children_given_one_triton_cache_share_it(tmp_path):
    body = "def write(name):\n    folder = os.environ['TRITON_CACHE_DIR']\n    open(os.path.join(folder, name), 'w').write('compiled')\n    return folder"
    cache = sandbox.shared_folder("course-triton-test-")
    children = [Child(student_module(body), {}, sandbox.probe()[0], triton_cache=cache) for _ in range(2)]
    try:
        assert [c.call("write", f"k{i}").result for i, c in enumerate(children)] == [str(cache)] * 2
        assert sorted(p.name for p in cache.iterdir()) == ["k0", "k1"]
    finally:
        for child in children:
            child.close()
        shutil.rmtree(cache)


def judge(nb, student="alice", salt="salt", parallel_cells=1) -> dict:
    return preprocessor.judge_notebook(nb, units.UNITS[UNIT06.name], student, salt, "auto", parallel_cells)


def test_unit06_solution_earns_full_marks_and_the_same_scores_again():
    nb = notebooks.read(UNIT06)
    first = judge(nb)
    assert all(score == points for score, points in first["scores"].values()), first
    assert first["flagged"] is False and first["sandbox"] == sandbox.probe()[0]
    again = judge(notebooks.read(UNIT06), parallel_cells=3)  # cells at once, each in its own child
    assert again["scores"] == first["scores"] and again["seeds"] == first["seeds"]
    assert list(again["scores"]) == list(first["scores"])
    assert judge(notebooks.read(UNIT06), student="bob")["seeds"] != first["seeds"]


def test_unit06_partial_credit_and_the_flag_for_a_self_check_that_lied():
    impl = wrong.parse(
        ROOT / "course" / "wrong" / "06_flash_attention_pytorch" / "forward_materialises_scores.py"
    )
    nb = notebooks.with_cell(notebooks.read(UNIT06), impl.replaces, impl.body)
    summary = judge(nb)
    assert 0 < summary["scores"]["test_forward"][0] < summary["scores"]["test_forward"][1]
    cell = next(c for c in nb.cells if notebooks.meta(c).get("grade_id") == "test_forward")
    assert [o.output_type for o in cell.outputs] == ["stream", "execute_result"]
    assert float(cell.outputs[1].data["text/plain"]) == summary["scores"]["test_forward"][0]
    assert "N×N" in cell.outputs[0].text
    zeros = "BLOCK_Q = BLOCK_K = 64\ndef flash_forward(Q, K, V, is_causal=False):\n    return torch.zeros_like(Q), torch.zeros(Q.shape[:-1])"
    nb = notebooks.with_cell(notebooks.read(UNIT06), "fa_forward", zeros)
    summary = judge(nb)  # no kernel ran, so every self-check "passed" in the notebook: a lie the judge flags
    assert summary["scores"]["test_forward"][0] == 0 and summary["flagged"]
    assert any("test_forward" in reason for reason in summary["reasons"])
    fresh = notebooks.with_cell(notebooks.read(UNIT06), "fa_forward", zeros)  # judging replaced nb's outputs
    assert judge(fresh, parallel_cells=3)["reasons"] == summary["reasons"]


@pytest.mark.skipif(sys.platform != "linux", reason="namespaces are Linux's")
def test_the_notebook_kernel_runs_in_the_sandbox_and_takes_its_processes_along(tmp_path):
    import nbformat
    from nbclient import NotebookClient

    from course.judge.kernel import SandboxedKernelManager

    marker = tmp_path / "outside.txt"
    marker.write_text("grader's file")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell(
            f"import os\nprint(os.getuid(), os.path.exists({str(ROOT / 'source')!r}), os.path.exists({str(marker)!r}))"
        ),
        nbformat.v4.new_code_cell("import subprocess\nsubprocess.Popen(['sleep', '313'])"),
    ]
    NotebookClient(
        nb,
        kernel_manager_class=SandboxedKernelManager,
        timeout=120,
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    assert nb.cells[0].outputs[0].text.split() == ["65534", "False", "False"]
    leftover = subprocess.run(["pgrep", "-f", "sleep 313"], capture_output=True, text=True).stdout
    assert leftover == "", "a process the kernel started outlived it"


class TimedChild:
    """A child whose student code answers `times[repeats == 1]` (the warm call, then a round) and records the
    repeats asked for."""

    def __init__(self, times):
        self.times, self.asked = times, []

    def call(self, target, repeats, timeout):
        self.asked.append(repeats)
        return SimpleNamespace(result=self.times[repeats == 1])


def judgement_of(child) -> Judgement:
    cell = Cell("test_speed", {"speed": 1}, lambda j: None)
    return Judgement(cell, child, seed=0, on_gpu=False)


def peer_taking(*seconds):
    return [lambda s=s: time.sleep(s) for s in seconds]


def test_speed_ratios_compare_the_student_and_the_peer_round_by_round():
    child = TimedChild({True: (50.0, 50.0), False: (2.0, 40.0)})
    ratios = triton_calls.speed_ratios(judgement_of(child), "student", peer_taking(0.001, 0.004), 0.01)
    assert ratios == pytest.approx([0.5, 0.1], rel=0.5)
    assert child.asked == [1] + [triton_calls.REPEATS] * triton_calls.ROUNDS


def test_a_far_too_slow_warm_call_fails_before_the_timed_rounds():
    child = TimedChild({True: (1000.0,), False: (1.0,)})  # the limit: 1 ms / 0.5 * SLOW_CALL_FACTOR
    with pytest.raises(AssertionError, match="not timed further"):
        triton_calls.speed_ratios(judgement_of(child), "student", peer_taking(0.001), 0.5)
    assert child.asked == [1]


@pytest.mark.parametrize("answer", [None, (1.0,), (1.0, -1.0), (1.0, "2")])
def test_speed_ratios_refuse_an_unreadable_measurement(answer):
    child = TimedChild({True: answer, False: answer})
    with pytest.raises(AssertionError, match="returned nothing"):
        triton_calls.speed_ratios(judgement_of(child), "student", peer_taking(0, 0), 0.5)
