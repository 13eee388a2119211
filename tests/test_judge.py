"""The judge: plain-data tensors, the scan, the sandbox, the child's failures, seeds and unit 06's verdicts."""

import os
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
from course.layout import COURSE
from course.selftest import replaced
from utils import measure
from utils.judged import tensor_files

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
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(OSError):
            read_plain(folder, "answer", 100)
        with pytest.raises(ValueError, match="too large"):
            read_plain(folder, "secret", 1)
    finally:
        os.close(folder)


def kinds(source: str, banned=()) -> set[tuple[str, str]]:
    return {(f.kind, f.what) for f in student_code.scan(source, list(banned))}


UNIT08_BANNED = units.UNITS["flash_attention_triton.ipynb"].banned


def attention(source: str, banned=UNIT08_BANNED) -> set[str]:
    """What the scan calls library or course attention in `source` (the paths it resolved)."""
    return {f.what for f in student_code.scan(source, list(banned)) if f.kind == "attention"}


@pytest.mark.parametrize(
    "source, path",
    [
        ("from torch.nn.functional import scaled_dot_product_attention as f", "torch.nn.functional."),
        ("import torch\nf = getattr(torch.nn.functional, 'scaled_dot_product_attention')", "torch.nn."),
        ("import torch\no = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v)", "torch.ops.aten."),
        ("import torch\no = torch._C._nn.scaled_dot_product_attention(q, k, v)", "torch._C._nn."),
        (
            "import torch.nn.functional as F\ndef f(q):\n    return F.scaled_dot_product_attention(q, q, q)",
            "torch",
        ),
        ("import torch\nF = torch.nn.functional\nfast = F.scaled_dot_product_attention", "torch.nn."),
        ("import torch\nfast = vars(torch.nn.functional)['scaled_dot_product_attention']", "torch.nn."),
        (
            "import torch\nfast = torch.nn.functional.__dict__.get('scaled_dot_product_attention')",
            "torch.nn.",
        ),
        (
            "import importlib\nf = importlib.import_module('torch.nn.functional').scaled_dot_product_attention",
            "torch",
        ),
        (
            "import pydoc\nfast = pydoc.locate('torch.nn.functional.scaled_dot_product_attention')",
            "torch.nn.",
        ),
        ("from torch.ops import aten\nfast = aten._efficient_attention_forward", "torch.ops.aten."),
        ("import torch\nlayer = torch.nn.MultiheadAttention(64, 4)", "torch.nn.MultiheadAttention"),
        ("from torch.nn.attention.flex_attention import flex_attention", "torch.nn.attention."),
        ("from utils.checks.flash_triton import reference_gradients as exact", "utils.checks.flash_triton."),
        (
            "import utils\ng = getattr(utils.checks.flash_triton, 'lse_and_delta')",
            "utils.checks.flash_triton.",
        ),
        (
            "import utils.checks.flash_triton\nr = utils.checks.flash_triton.grading.reference_attention",
            "utils.",
        ),
    ],
)
def test_scan_finds_library_attention_however_it_is_reached(source, path):
    found = attention(source)
    assert len(found) == 1 and next(iter(found)).startswith(path), found


def test_scan_accuses_no_one_for_words_in_their_own_names():
    """A student may call their own functions, variables and attributes anything (issue 31: a unit-08
    submission whose launcher was named launch_flash_attention_forward scored 0 as "library attention")."""
    source = (
        "import torch\nimport utils.checks.flash_triton\n"
        "def scaled_dot_product_attention_tiles(q, k, v):\n"
        '    """Unlike torch.nn.functional.scaled_dot_product_attention, tiled."""\n'
        "    return q\n"
        "def launch_flash_attention_forward(q, k, v, _efficient_attention=None):\n"
        "    return scaled_dot_product_attention_tiles(q, k, v)\n"
        "def reference_gradients(q):\n    return q\n"
        "class MultiheadAttentionFunction(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, q, k, v):\n"
        "        ctx.multi_head_attention_forward = launch_flash_attention_forward\n"
        "        lse_and_delta = reference_gradients(q)\n"
        "        print('scaled_dot_product_attention', lse_and_delta)\n"
        "        return launch_flash_attention_forward(q, k, v)\n"
        "flash_attention = launch_flash_attention_forward\n"
        "memory_trace = torch.profiler.profile\n"
    )
    assert attention(source) == set()
    assert attention(source, units.UNITS["memory_bottleneck.ipynb"].banned) == set()


def source_notebook(unit: str, name: str):
    return notebooks.read(COURSE.source / unit / name)


def student_modules(kind: str):
    """(case, the student's module, its unit's judge) of every attack ("redteam") or legitimate variant
    ("variant") of the course."""
    folder = COURSE.redteam if kind == "redteam" else COURSE.variants
    for unit_dir in sorted(folder.iterdir()):
        for case in wrong.load(unit_dir, kind):
            judge = units.UNITS[case.notebook]
            submission = replaced(source_notebook(unit_dir.name, case.notebook), case)
            yield case, student_code.module_source(submission, judge.student_cells, judge.preamble), judge


def test_scan_zeroes_every_attack_whose_honest_score_is_zero():
    """The attacks capped at 0 on every test cell of their notebook (library or course attention imported
    under another name, aten operators) are the ones only the scan stops."""
    zeroed = []
    for attack, module, judge in student_modules("redteam"):
        unit = attack.path.parent.name
        if all(
            attack.caps.get(g, 1) == 0
            for g in notebooks.graded_points(source_notebook(unit, attack.notebook))
        ):
            zeroed.append(attack.name)
            assert attention(module, judge.banned), attack.name
    assert len(zeroed) >= 6, zeroed


def test_scan_accuses_no_solution_and_no_legitimate_variant():
    found = {
        variant.name: attention(module, judge.banned) for variant, module, judge in student_modules("variant")
    }
    for unit in COURSE.units():
        for name in COURSE.notebooks(unit):
            judge = units.UNITS.get(name)
            if judge:
                module = student_code.module_source(
                    source_notebook(unit, name), judge.student_cells, judge.preamble
                )
                found[name] = attention(module, judge.banned)
    assert not {name: paths for name, paths in found.items() if paths}


def test_scan_flags_tampering():
    found = kinds("import sys, os\nsys.excepthook = None\nos._exit(0)\nsys.modules['x'] = 1\nopen('f')")
    assert {"sys.excepthook", "os._exit", "sys.modules", "opening files"} <= {what for _, what in found}


PATCHES = [
    "judged.run = None",
    "grading.x[0] = 1",
    "judged.run.__defaults__ = (1,)",
    "judged.__dict__['run'] = f",
    "vars(judged)['run'] = f",
    "del vars(judged)['run']",
    "judged.__dict__.update(run=f)",
    "vars(judged).setdefault('run', f)",
    "x = judged.__dict__.pop('run')",
    "j = judged\nj.run = f",
    "j, g = judged, grading\ng.assert_close = f",
    "namespace = vars(judged)\nnamespace['run'] = f",
    "from utils.judged import triton_calls as j\nj.run = f",
    "globals()['judged'].run = f",
    "globals()['grading'].__dict__.update(assert_close=f)",
    "object.__setattr__(judged, 'run', f)",
    "type(judged).__setattr__(judged, 'run', f)",
    "judged.__setattr__('run', f)",
    "object.__delattr__(grading, 'assert_close')",
    "import importlib\nimportlib.import_module('utils.grading').assert_close = f",
    "getattr(utils, 'grading').assert_close = f",
    "for grading.assert_close in [f]:\n    pass",
]


@pytest.mark.parametrize("patch", PATCHES)
def test_scan_flags_every_way_of_patching_an_imported_module(patch):
    source = f"import utils.judged.triton_calls as judged\nfrom utils import grading\nimport utils\n{patch}\n"
    assert ("tampering", "patching an imported module") in kinds(source)


def test_scan_flags_threads_but_not_own_attributes_or_namespaces():
    assert ("tampering", "threads") in kinds("from concurrent.futures import ThreadPoolExecutor")
    assert ("tampering", "setattr") in kinds("import torch\nsetattr(torch, 'mm', None)")
    own = (
        "import torch\nfrom utils import grading\nCACHE = {}\n"
        "class F:\n"
        "    def forward(ctx, q):\n"
        "        ctx.is_causal = True\n"
        "        q[0] = 1\n"
        "        CACHE[q.shape] = grading.assert_close\n"
        "        vars(ctx)['saved'] = q\n"
        "        ctx.__dict__.update(more=q)\n"
        "        object.__setattr__(ctx, 'x', 1)\n"
        "        super().__setattr__('y', 2)\n"
        "        globals()['CACHE'] = {}\n"
        "        out = torch.empty(3)\n"
        "        out[0] = grading.TOL\n"
        "        return grading.__dict__.get('TOL'), vars(grading).items()\n"
    )
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


def student_module(body: str) -> str:
    return f"import torch\nimport os\n\n{body}\n"


def test_a_crash_or_a_hang_costs_one_call_and_the_next_call_runs():
    body = "def f(x, how):\n    if how == 'crash':\n        os._exit(3)\n    if how == 'hang':\n        while True:\n            pass\n    return x * 2"
    child = Child(student_module(body), {}, sandbox.choose("auto")[0])
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
    child = Child(
        student_module(body), {"banned": [], "ban_fused_attention": True}, sandbox.choose("auto")[0]
    )
    try:
        with pytest.raises(CallFailed, match="not allowed"):
            child.call("g", torch.randn(1, 4, 8))
        with pytest.raises(CallFailed, match="undefined_method"):
            child.call("h", torch.randn(2))
    finally:
        child.close()


def test_children_given_one_triton_cache_share_it(tmp_path):
    body = "def write(name):\n    folder = os.environ['TRITON_CACHE_DIR']\n    open(os.path.join(folder, name), 'w').write('compiled')\n    return folder"
    owner = sandbox.new_owner()
    cache = sandbox.shared_folder("course-triton-test-", owner)
    mechanism = sandbox.choose("auto")[0]
    children = [Child(student_module(body), {}, mechanism, triton_cache=cache, owner=owner) for _ in range(2)]
    try:
        assert [c.call("write", f"k{i}").result for i, c in enumerate(children)] == [str(cache)] * 2
        assert sorted(p.name for p in cache.iterdir()) == ["k0", "k1"]
    finally:
        for child in children:
            child.close()
        sandbox.remove_workspace(cache)


def judge(nb, student="alice", salt="salt", parallel_cells=1) -> dict:
    return preprocessor.judge_notebook(nb, units.UNITS[UNIT06.name], student, salt, "auto", parallel_cells)


def test_unit06_solution_earns_full_marks_and_the_same_scores_again():
    nb = notebooks.read(UNIT06)
    first = judge(nb)
    assert all(score == points for score, points in first["scores"].values()), first
    assert first["flagged"] is False and first["sandbox"] == sandbox.choose("auto")[0]
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
    uid, *seen = nb.cells[0].outputs[0].text.split()
    assert seen == ["False", "False"] and int(uid) >= sandbox.UID_BASE  # a uid of this grading's own
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
    assert child.asked == [1] + [measure.REPEATS] * measure.ROUNDS


def test_a_far_too_slow_warm_call_fails_before_the_timed_rounds():
    child = TimedChild({True: (1000.0,), False: (1.0,)})  # the limit: 1 ms / 0.5 * SLOW_CALL_FACTOR
    with pytest.raises(AssertionError, match="not timed further"):
        triton_calls.speed_ratios(judgement_of(child), "student", peer_taking(0.001), 0.5)
    assert child.asked == [1] * measure.WARM_TRIES  # tried again before failing, never timed in rounds


class UnluckyChild(TimedChild):
    """A warm call that waited once behind another grading's long kernel, then answers like `times`."""

    def call(self, target, repeats, timeout):
        if not self.asked:
            self.asked.append(repeats)
            return SimpleNamespace(result=(1000.0,))
        return super().call(target, repeats, timeout)


def test_one_unlucky_warm_call_does_not_cost_the_speed_point():
    child = UnluckyChild({True: (2.0,), False: (2.0,)})
    ratios = triton_calls.speed_ratios(judgement_of(child), "student", peer_taking(0.001), 0.5)
    assert len(ratios) == 1 and child.asked == [1, 1] + [measure.REPEATS] * measure.ROUNDS


@pytest.mark.parametrize("answer", [None, (1.0,), (1.0, -1.0), (1.0, "2")])
def test_speed_ratios_refuse_an_unreadable_measurement(answer):
    child = TimedChild({True: answer, False: answer})
    with pytest.raises(AssertionError, match="returned nothing"):
        triton_calls.speed_ratios(judgement_of(child), "student", peer_taking(0, 0), 0.5)


def test_a_reply_that_lands_while_the_grader_sends_on_the_shell_socket_is_read_at_once(tmp_path):
    """An Output widget (units 03 and 04's sliders) sends its updates on the shell socket while nbclient waits
    there for the cell's reply: a send that comes just after the reply reached the socket consumed its wake-up,
    and nbclient read the reply only when its wait ran out (the cell's timeout, 600 s: CI's selftest sample hung
    so on unit 03's slider cell). The grader's shell channel looks at the socket again every second."""
    import asyncio

    import zmq
    import zmq.asyncio
    from jupyter_client.session import Session

    from course.judge.kernel import SHELL_POLL, SandboxedKernelManager

    channel_class = SandboxedKernelManager(kernel_name="python3", sandbox="none").client().shell_channel_class

    async def wait_for_the_reply() -> float:
        session, address = Session(key=b"k"), f"ipc://{tmp_path}/shell"
        kernel = zmq.Context.instance().socket(zmq.ROUTER)
        kernel.bind(address)
        grader = zmq.asyncio.Context.instance().socket(zmq.DEALER)
        grader.setsockopt(zmq.IDENTITY, b"grader")
        grader.connect(address)
        channel = channel_class(grader, session, asyncio.get_running_loop())
        try:
            channel.send(session.msg("kernel_info_request"))  # the kernel learns the grader's identity
            kernel.recv_multipart()
            began = time.monotonic()
            waiting = asyncio.ensure_future(channel.get_msg(timeout=30))
            await asyncio.sleep(0.2)
            session.send(kernel, "execute_reply", {"status": "ok"}, ident=[b"grader"])
            time.sleep(0.1)  # the reply reaches the grader's socket, and then the widget's update goes out
            channel.send(session.msg("comm_msg", {"comm_id": "widget", "data": {"method": "update"}}))
            assert (await waiting)["msg_type"] == "execute_reply"
            return time.monotonic() - began
        finally:
            kernel.close(0)
            grader.close(0)

    assert asyncio.run(wait_for_the_reply()) < SHELL_POLL + 5  # not the wait's 30 s


def test_a_self_check_the_kernel_never_reached_is_not_passed_and_an_error_reply_shows(monkeypatch):
    """The notebook's summary read every test cell without an error output as a visible self-check passed, also one
    the kernel never reached (it died before): the likely way a wrong implementation of unit 03 read as caught by
    nothing in CI's selftest sample.
    The grader now notes each cell whose reply came; a cell without one never ran. nbgrader's own handler still shows
    an error reply whose output never came. A submission cannot claim its kernel died."""
    import nbformat

    from course.judge import kernel

    def dropping_errors(self, msg, cell, cell_index):  # the error output lost on its way
        return None if msg["msg_type"] == "error" else original(self, msg, cell, cell_index)

    original = kernel.SandboxedExecute.process_message
    monkeypatch.setattr(kernel.SandboxedExecute, "process_message", dropping_errors)
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(s) for s in ("print('ok')", "assert 1 == 2, 'no'")]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata[kernel.KERNEL_DIED] = "claimed by the submission"
    resources = {"metadata": {}}
    executor = kernel.SandboxedExecute(timeout=60, allow_errors=True)
    assert executor.iopub_timeout >= kernel.IOPUB_WAIT
    executor.preprocess(nb, resources)
    assert resources[kernel.RAN] == {0, 1} and kernel.KERNEL_DIED not in nb.metadata
    assert preprocessor.kernel_summary(nb.cells[0])[0] is True
    passed, line = preprocessor.kernel_summary(nb.cells[1])
    assert passed is False and "AssertionError: no" in line
    never_ran = nbformat.v4.new_code_cell("print('after the kernel died')")
    assert preprocessor.kernel_summary(never_ran, ran=False)[0] is None
