"""utils.checks.isolation: run a check in a child process on the student's module (built as the judge builds it), and
turn a failure, a crash or a hang into an AssertionError, with nothing on stderr; proven in a notebook kernel
too. And export_module, the course's own export of notebook objects with what they use."""

import importlib.util
import os
import sys
import textwrap
import time

import nbformat
import pytest
from nbclient import NotebookClient

import utils
from utils.checks import isolation
from utils.checks.isolation import failure_record, module_source, run_check
from utils.judged import student_module
from utils.runtime import CPU_BANNER

STUDENT = """
import torch
import triton
import triton.language as tl

import utils

BLOCK = 16
demo_input = torch.zeros(3, device=utils.device())


@triton.jit
def double_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offsets, 2 * tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)


def double(x):
    double_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, x.numel(), BLOCK=BLOCK)
    return x


demo_output = double(demo_input)
"""

CHECKS = """
import os
import signal
import sys
import time

import torch

import utils


def doubles(module, n):
    x = torch.arange(n, dtype=torch.float32, device=utils.device())
    assert torch.equal(module.double(x.clone()), 2 * x), "double() is wrong"
    print("checked", n)
    return {"n": n}


def fails(module):
    raise AssertionError("the property failed / 性质不成立")


def crashes(module):
    os.kill(os.getpid(), signal.SIGSEGV)


def hangs(module):
    time.sleep(60)


def leaves_an_empty_result(module):
    open(sys.argv[-1], "w").close()  # the result file exists but is empty, as if the child died writing it
    os._exit(0)


def dies_after_its_result(module):
    import atexit

    atexit.register(lambda: os.kill(os.getpid(), signal.SIGSEGV))  # dies while exiting, result written
    return "passed"


def banner(module):
    print("CHILD SAYS", os.environ.get("FLASH_COURSE_BANNER_SHOWN"))


def parent(module):
    return os.getppid()


def taints(module):
    import builtins

    builtins.TAINTED = torch.TAINTED = module.TAINTED = True
    return True


def sees_taint(module):
    import builtins

    return [hasattr(builtins, "TAINTED"), hasattr(torch, "TAINTED"), hasattr(module, "TAINTED")]
"""


def _with_path(folder) -> str:
    """PYTHONPATH with `folder` first, keeping what was there (a GPU box may need it for ipykernel)."""
    return os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH")) if p)


PREAMBLE = "import torch\nimport triton\nimport triton.language as tl\n\nimport utils"


@pytest.fixture
def student(tmp_path, monkeypatch):
    """The student's code as an imported module (a stand-in for the notebook's namespace), and its notebook's
    layout ("fake.ipynb": one student cell, the whole file)."""
    monkeypatch.setitem(
        student_module.LAYOUTS,
        "fake.ipynb",
        student_module.Layout("fake.ipynb", {"cell": "double"}, PREAMBLE),
    )
    (tmp_path / "fake_checks.py").write_text(CHECKS)
    monkeypatch.setenv("PYTHONPATH", _with_path(tmp_path))  # the child imports the checks from here
    path = tmp_path / "notebook_cells.py"
    path.write_text(STUDENT)
    spec = importlib.util.spec_from_file_location("notebook_cells", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_module_source_keeps_definitions_and_needed_assignments_only(student):
    source = module_source([student.double], namespace=vars(student))
    compile(source, "exported", "exec")
    assert source.startswith("import utils")
    assert "def double_kernel" in source and "@triton.jit" in source and "BLOCK = 16" in source
    assert "demo_output" not in source and "demo_input" not in source  # demo code does not run again


def test_run_check_returns_the_value_and_echoes_stdout(student, capfd):
    assert run_check("fake_checks:doubles", "fake.ipynb", namespace=vars(student), n=37) == {"n": 37}
    out, err = capfd.readouterr()
    assert "checked 37" in out and err == ""


@pytest.mark.parametrize(
    ("check", "timeout", "message"),
    [
        ("fails", 120, "the property failed"),
        ("crashes", 120, "kernel crashed (exit -11, SIGSEGV)"),
        ("hangs", 3, "timed out"),
        ("leaves_an_empty_result", 120, "kernel crashed (exit 0)"),
        ("dies_after_its_result", 120, "kernel crashed (exit -11, SIGSEGV)"),
    ],
)
def test_failures_become_assertion_errors_without_stderr(student, capfd, check, timeout, message):
    start = time.monotonic()
    with pytest.raises(AssertionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_check(f"fake_checks:{check}", "fake.ipynb", timeout=timeout, namespace=vars(student))
    assert time.monotonic() - start < 60
    assert capfd.readouterr().err == ""


@pytest.mark.skipif(
    not hasattr(os, "fork") or utils.mode().is_gpu, reason="the template forks on Linux CPUs only"
)
def test_checks_fork_from_one_template_and_leave_it_nothing(student):
    """Issue 50: the checks' children are forked from one process that imported torch and Triton once (each used
    to import them again), and one check's changes to builtins, torch or the module are gone for the next."""
    parents = {run_check("fake_checks:parent", "fake.ipynb", namespace=vars(student)) for _ in range(2)}
    assert parents == {isolation._Template.running.process.pid} and os.getpid() not in parents
    assert run_check("fake_checks:taints", "fake.ipynb", namespace=vars(student))
    assert run_check("fake_checks:sees_taint", "fake.ipynb", namespace=vars(student)) == [False, False, False]


def test_a_template_that_fails_leaves_checks_to_fresh_processes(student, monkeypatch):
    monkeypatch.setattr(isolation._Template, "running", None)
    monkeypatch.setattr(isolation, "TEMPLATE_ARGV", [sys.executable, "-c", "import sys; sys.exit(3)"])
    monkeypatch.setattr(isolation._Template, "failed", False)
    assert run_check("fake_checks:parent", "fake.ipynb", namespace=vars(student)) == os.getpid()
    assert isolation._Template.failed
    assert run_check("fake_checks:doubles", "fake.ipynb", namespace=vars(student), n=5) == {"n": 5}


def test_the_child_does_not_repeat_the_cpu_banner(student, capfd):
    run_check("fake_checks:banner", "fake.ipynb", namespace=vars(student))
    out = capfd.readouterr().out
    assert "CHILD SAYS 1" in out and CPU_BANNER not in out


def test_a_name_grading_would_not_see_fails_before_the_child_starts(tmp_path, monkeypatch):
    path = tmp_path / "cells.py"
    path.write_text("def scaled(x):\n    return x * SCALE\n")
    spec = importlib.util.spec_from_file_location("cells", path)
    cells = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cells)
    layout = student_module.Layout("scaled.ipynb", {"cell": "scaled"}, PREAMBLE)
    monkeypatch.setitem(student_module.LAYOUTS, "scaled.ipynb", layout)
    with pytest.raises(AssertionError, match="`SCALE`.*torch, triton, utils"):
        run_check("no_such_module:never_called", "scaled.ipynb", namespace={**vars(cells), "SCALE": 2})


def test_a_name_error_says_where_helpers_go():
    try:
        exec(compile("def f():\n    return helper()\nf()", "student_code.py", "exec"), {})
    except NameError as error:
        record = failure_record(error)
    assert "NameError: name 'helper' is not defined" in record["error"]
    assert (
        "put helpers inside the solution cell" in record["error"]
        and "请把辅助函数放进解答单元格内" in record["error"]
    )


def test_missing_source_is_a_clear_error():
    with pytest.raises(ValueError, match="cannot find the source code"):
        module_source([len], namespace={})


NOTEBOOK_CHECKS = """
import torch

import utils


def doubler_works(module):
    x = torch.arange(100, dtype=torch.float32, device=utils.device())
    assert torch.equal(module.Doubler.double(x.clone()), 2 * x)
    return "doubled"


def broken_runs(module):
    module.broken(torch.zeros(16, device=utils.device()))
"""


def test_works_in_a_notebook_kernel(tmp_path, monkeypatch):
    """The real setting: a kernel and a class in separate cells, an out-of-bounds kernel, one kernel."""
    (tmp_path / "notebook_checks.py").write_text(NOTEBOOK_CHECKS)
    monkeypatch.setenv("PYTHONPATH", _with_path(tmp_path))  # inherited by the kernel, then by the child
    cells = [
        "import utils\nimport utils.checks.isolation\nimport torch\nimport triton\nimport triton.language as tl",
        STUDENT,
        textwrap.dedent("""
            @triton.jit
            def oob_kernel(x_ptr, BLOCK: tl.constexpr):
                offsets = tl.arange(0, BLOCK) + 1_000_000_000_000
                tl.store(x_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + offsets))


            class Doubler:
                @staticmethod
                def double(x):
                    return double(x)


            def broken(x):
                oob_kernel[(1,)](x, BLOCK=16)
        """),
        "from utils.judged import student_module\n"
        "student_module.LAYOUTS['demo.ipynb'] = student_module.Layout(\n"
        f"    'demo.ipynb', {{'kernel': 'double', 'classes': 'Doubler'}}, {PREAMBLE!r}\n"
        ")\n"
        "print(utils.checks.isolation.run_check('notebook_checks:doubler_works', 'demo.ipynb'))",
        textwrap.dedent("""
            try:
                utils.checks.isolation.run_check("notebook_checks:broken_runs", "demo.ipynb")
            except AssertionError as error:
                print("CAUGHT", error)
            print("kernel alive")
        """),
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
    ).execute()

    def printed(cell):
        return "".join(o.get("text", "") for o in cell.outputs)

    assert "doubled" in printed(nb.cells[3])
    assert "CAUGHT" in printed(nb.cells[4]) and "kernel alive" in printed(nb.cells[4])
    assert all(o.get("name") != "stderr" for cell in nb.cells[3:] for o in cell.outputs)
