"""An attacker's eye on issue 45's layers: attacks by a helper briefed only to break them.

A test that passes is an attack that failed (or a hole fixed since: its commit says the test failed before); an
attack that still works is marked `xfail(strict=True, reason="HOLE: ...")`, so fixing it turns into an unexpected
pass. Each one runs through the real layer: here the judge of unit 06 (`judged_unit06`, two sandboxed children).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import marshal
import re
import types
import zipfile
from types import SimpleNamespace

import nbformat
import pytest
from test_sandbox_attacks import needs, sandboxed
from test_similarity import PUBLISHED, UNIT06, judged_unit06

from course import ROOT, notebooks
from course.grading import similarity
from course.grading.formgrader_files import StudentFilesAsDownloads
from course.judge import feedback_html, preprocessor, unit06
from course.judge.units import UNITS

HEX = ("import math\n" + PUBLISHED).encode().hex()  # the published answer, in no form a text comparison reads
RAN = "code made at run time, seen in the judge's child"
CODE_FIELDS = (
    "co_argcount co_posonlyargcount co_kwonlyargcount co_nlocals co_stacksize co_flags co_firstlineno co_code "
    "co_names co_varnames co_freevars co_cellvars co_filename co_name co_qualname co_linetable co_exceptiontable"
).split()


def hole(reason: str):
    return pytest.mark.xfail(strict=True, reason=f"HOLE: {reason}")


def by_hand(code: types.CodeType) -> str:
    """An expression that builds `code` from literals, naming no compile, exec or code type: `replace` on a
    generator's code object, its constants (nested code) built the same way."""
    consts = "".join(f"{by_hand(c) if isinstance(c, types.CodeType) else repr(c)}, " for c in code.co_consts)
    fields = "".join(f"{field}={getattr(code, field)!r}, " for field in CODE_FIELDS)
    return f"(x for x in ()).gi_code.replace({fields}co_consts=({consts}))"


def unseen(cell: str, read: bool = False) -> dict:
    """The judge's summary of unit 06 with `cell` added; asserts first that the similarity check's reading of the
    text sees nothing (unless it is `read`) and that the module loaded (the answer was usable)."""
    assert read or similarity.made_at_run_time(cell) == set(), similarity.made_at_run_time(cell)
    judged = judged_unit06(cell)
    score, points = judged["scores"]["test_forward"]
    assert score == points, judged
    return judged


def test_code_run_by_the_standard_librarys_runners_or_built_by_hand_is_seen_by_the_judges_child():
    """The published answer, as hex, run by `code.InteractiveInterpreter`, `bdb.Bdb().run` and `timeit`'s setup,
    and a function whose code object is built by hand from literals: the audit hook saw none of them (the runners
    compile and execute in the standard library's frames, and `code.replace` raises no event it watched), so the
    pair scored full marks unflagged. The hook now looks through those runners to their caller, and watches code
    objects made by the student's code."""
    cell = (
        "import math, bdb, code as _c, timeit\n"
        f"_a = _c.InteractiveInterpreter(globals()).runsource(bytes.fromhex('{HEX}').decode(), '<x>', 'ex' + 'ec')\n"
        f"_b = bdb.Bdb().run(bytes.fromhex('{HEX}').decode(), globals())\n"
        f"_t = timeit.Timer('pass', setup=bytes.fromhex('{HEX}').decode())\n"
        "_e = _t.timeit(1)\n"
        f"_d = type(lambda: 0)({by_hand(compile(PUBLISHED, 'x', 'exec').co_consts[0])}, globals())\n"
        "_proof = _d([1.0, 2.0]) + logsumexp([1.0])\n"
    )
    reasons = " ".join(unseen(cell)["reasons"])
    assert RAN in reasons, reasons
    for made in ("compile: <x>", "compile: <string>", "compile: <timeit-src>", "code.__new__: logsumexp"):
        assert made in reasons, (made, reasons)


def test_a_module_written_at_run_time_and_imported_is_seen():
    """The published answer written by the student's code into a folder of /tmp as a .py, as a zip archive named
    data.bin put on sys.path, or as a sourceless .pyc, then imported: the import system compiles or
    unmarshals it in its own frames, which the hook took for the library's; full marks unflagged. The hook now
    flags a module loaded from outside the library while the student's code runs (the judge's child has nothing
    handed in to import)."""
    source = "import math\n" + PUBLISHED
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w") as archive:
        archive.writestr("in_zip.py", source)
    compiled = importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(compile(source, "x.py", "exec"))
    written = {"as_source.py": source.encode(), "data.bin": packed.getvalue(), "as_bytecode.pyc": compiled}
    cell = "import math, sys, tempfile, pathlib\n"
    for i, (name, data) in enumerate(written.items()):
        folder = "d + '/data.bin'" if name == "data.bin" else "d"
        module = "in_zip" if name == "data.bin" else name.split(".")[0]
        cell += (
            f"def f{i}(xs):\n"
            "    d = tempfile.mkdtemp()\n"
            f"    pathlib.Path(d, '{name}').write_bytes(bytes.fromhex('{data.hex()}'))\n"
            f"    sys.path.insert(0, {folder})\n"
            f"    import {module}\n"
            f"    return {module}.logsumexp(xs)\n"
            f"_{i} = f{i}([1.0, 2.0])\n"
        )
    reasons = " ".join(unseen(cell)["reasons"])
    for loaded in ("as_source.py", "data.bin/in_zip.py", "as_bytecode.pyc"):
        assert re.search(rf"import /tmp/\w+/{loaded}\b", reasons), (loaded, reasons)


# a logging configuration whose handler's arguments (which logging.config evaluates) define logsumexp
LOGGING_CONFIG = (
    "[loggers]\nkeys=root\n[handlers]\nkeys=h\n[formatters]\nkeys=\n[logger_root]\nhandlers=h\n[handler_h]\n"
    "class=NullHandler\nargs=(setattr(__import__('logging'), 'lse', lambda xs: (lambda m: m + "
    "__import__('math').log(sum(__import__('math').exp(x - m) for x in xs)))(max(xs))),)[1:]\n"
)


def test_code_evaluated_by_logging_config_is_seen():
    """A logging configuration, as hex, whose handler's `args` logging.config evaluates (`eval` in its own frame,
    as the runners the hook looks through): the expression defines logsumexp. The similarity check reads no name
    it knows; the audit hook took the evaluation for the library's (full marks, no reason). logging.config is now
    among its RUNNERS."""
    cell = (
        "import io, logging.config\n"
        f"_c = io.StringIO(bytes.fromhex('{LOGGING_CONFIG.encode().hex()}').decode())\n"
        "_f = logging.config.fileConfig(_c, disable_existing_loggers=False)\n"
        "logsumexp = logging.lse\n"
        "_proof = logsumexp([1.0, 2.0])\n"
    )
    assert RAN in " ".join(unseen(cell)["reasons"])


LSE = (
    "lambda xs: (lambda m, math=__import__('math'): m + math.log(sum(math.exp(x - m) for x in xs)))(max(xs))"
)
# more of the standard library that runs a string in its own frame: a .pth file's import lines (site), annotations
# evaluated (inspect), a file of settings (optparse); each defines logsumexp from hex
STDLIB_EVALUATORS = {
    "site": (
        "import math, site, pathlib, tempfile\n_d = tempfile.mkdtemp()\n"
        f"_w = pathlib.Path(_d, 'a.pth').write_text(bytes.fromhex('{f'import math; math.lse = {LSE}'.encode().hex()}').decode())\n"
        "_s = site.addsitedir(_d)\nlogsumexp = math.lse\n"
    ),
    "inspect": (
        "import math, inspect\n"
        f"def _f(x: bytes.fromhex('{f'globals().update(logsumexp={LSE})'.encode().hex()}').decode()): pass\n"
        "_a = inspect.get_annotations(_f, eval_str=True)\n"
    ),
    "optparse": (
        "import math, optparse, pathlib, tempfile\n_p = pathlib.Path(tempfile.mkdtemp(), 'o.txt')\n"
        f"_w = _p.write_text(bytes.fromhex('{('import math' + chr(10) + 'lse = ' + LSE).encode().hex()}').decode())\n"
        "_v = optparse.Values()\n_r = _v.read_file(str(_p), mode='loose')\nlogsumexp = _v.lse\n"
    ),
}


@pytest.mark.parametrize("runner", STDLIB_EVALUATORS)
def test_code_evaluated_by_more_of_the_standard_library_is_seen(runner):
    """As logging.config: the answer, as hex, run by `site.addsitedir` (a .pth file's import line is executed),
    `inspect.get_annotations(..., eval_str=True)` or `optparse.Values.read_file`, each in its own frame: full
    marks, no reason. The three are now among the hook's RUNNERS."""
    assert RAN in " ".join(unseen(STDLIB_EVALUATORS[runner] + "_proof = logsumexp([1.0, 2.0])\n")["reasons"])


@hole("the audit hook shares the student's process: gc finds it, told all code is library code, it is blind")
def test_the_audit_hook_blinded_through_gc_still_sees():
    """The hook found among every object (`gc.get_objects`) and told that every file is the library's: the
    standard library's runner then runs the answer unseen. The similarity check flags the name `get_objects`, the
    judge's scan the name `gc` in units 02–04, 06 and 08 (a lookup through `vars(...).items()` is no name); the
    audit hook itself sees nothing run."""
    cell = (
        "import math, gc, code as _c\n"
        '_blind = [w.__dict__.update(library=("",)) for w in gc.get_objects() if type(w).__name__ == "Watch"]\n'
        f"_a = _c.InteractiveInterpreter(globals()).runsource(bytes.fromhex('{HEX}').decode(), '<x>', 'ex' + 'ec')\n"
        "_proof = logsumexp([1.0])\n"
    )
    assert RAN in " ".join(unseen(cell, read=True)["reasons"])


@hole("TorchScript compiled from a string (torch.jit.CompilationUnit) runs unseen by the judge's child")
def test_torchscript_compiled_from_a_string_is_seen():
    """TorchScript compiled from a hex string by `torch.jit.CompilationUnit`: torch parses and compiles it in C++,
    no Python compile or exec event. The similarity check flags the name `CompilationUnit`; the judge's child sees
    nothing run."""
    script = (
        "def lse(xs: List[float]) -> float:\n    top = max(xs)\n    s = 0.0\n    for x in xs:\n"
        "        s += math.exp(x - top)\n    return top + math.log(s)\n"
    )
    cell = (
        "import math, torch\n"
        f"_cu = torch.jit.CompilationUnit(bytes.fromhex('{script.encode().hex()}').decode())\n"
        "def logsumexp(xs):\n    return _cu.lse(list(xs))\n"
        "_proof = logsumexp([1.0])\n"
    )
    assert RAN in " ".join(unseen(cell, read=True)["reasons"])


MAPPED_FILES = """
import ctypes, json, os, resource
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
path = os.path.join(os.getcwd(), "home", "page")
with open(path, "wb") as page:
    page.write(bytes(4096))
held = 0
for _ in range(nofile + 2000):  # 2,000 past the limit: a few thousand of the host's millions
    fd = os.open(path, os.O_RDONLY)
    mapped = libc.mmap(None, 4096, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED: the mapping keeps the open file
    os.close(fd)
    if mapped in (None, ctypes.c_void_p(-1).value):
        break
    held += 1
print(json.dumps({"nofile": nofile, "held": held}))
"""


@hole(
    "a file mapped and closed keeps its entry of the host's file table: a grading can fill it past nofile × nproc"
)
def test_a_grading_holds_no_more_of_the_hosts_file_table_than_its_fit():
    """`course.judge.tables` fits nofile × nproc open files a grading into the host's free file table. A file
    mapped into memory and then closed keeps its entry of that table (`/proc/sys/fs/file-nr`) with no descriptor
    to count: one process holds up to vm.max_map_count (65,530) of them, 2,048 processes a grading; here, as
    measured, 60,000 in one sandboxed process of nofile 4,096 (the host's table: 2.47 million). Only the grading's
    memory (some 0.5 KB an entry) bounds them."""
    needs("bubblewrap")
    found = sandboxed("bubblewrap", MAPPED_FILES)
    assert found["held"] <= found["nofile"], found


@pytest.mark.parametrize(
    "path",
    [
        "/formgrader/submissions/abc/work.html",
        "/formgrader/submissions//abc/work.html",
        "/formgrader/submissions/abc/formgrader/submissions/work.html",
    ],
)
def test_every_file_a_student_handed_in_is_a_download(path):
    """formgrader's page of a submission is formgrader/submissions/<id>/; a file handed in is below it, served as a
    sandboxed download. A file in a folder the student named formgrader/submissions/ ended like that page
    and was served as a page, its script running in the instructor's server: a relative
    link in the student's markdown (`[plot](formgrader/submissions/plot.html)`) leads there from their page."""
    assert StudentFilesAsDownloads(SimpleNamespace(path=f"/user/teacher{path}")).student_file
    assert not StudentFilesAsDownloads(
        SimpleNamespace(path="/user/teacher/formgrader/submissions/abc/")
    ).student_file


UNIT06_NAIVE_FORWARD = """
from torch.utils._python_dispatch import _disable_current_modes as _unwatched
def flash_forward(Q, K, V, is_causal=False):
    with _unwatched():  # the judge child's dispatch mode (largest tensor, fused attention banned) off
        S = (Q.float() @ K.float().transpose(-1, -2)) * Q.shape[-1] ** -0.5
        L = torch.logsumexp(S, dim=-1)
        O = (torch.softmax(S, dim=-1) @ V.float()).to(Q.dtype)
    return O, L
"""


def forward_judged(code: str) -> dict:
    """Unit 06's test_forward judged with `code` added to the forward's solution cell: {"N×N": the 'no N×N
    intermediate' property held, "flagged": the pair was flagged}."""
    nb = notebooks.read(UNIT06)
    notebooks.solution_cells(nb)["fa_forward"].source += "\n" + code
    unit = dataclasses.replace(
        UNITS[UNIT06.name], cells={"test_forward": UNITS[UNIT06.name].cells["test_forward"]}
    )
    judged = preprocessor.judge_notebook(nb, unit, "mallory", "salt", "auto")
    kept = [held for prop, held in judged["properties"]["test_forward"].items() if "N×N" in prop]
    return {"N×N": kept == [True], "flagged": judged["flagged"]}


def test_the_largest_tensor_is_seen_with_the_dispatch_mode_turned_off():
    """Unit 06's flash_forward replaced by plain attention (its Nq×Nk scores whole) computed inside
    `torch.utils._python_dispatch._disable_current_modes()`: the child's dispatch mode that records the largest
    tensor (and refuses fused attention) sees none of it, and test_forward's 'no N×N intermediate' held (3/3
    unflagged, where the same code outside the context manager lost it: 2.5/3). The judge's scan now flags the
    names that turn the mode off, for review, in units 04, 06 and 08 as it did in 02 and 03 (`WATCH_SWITCHES`; a
    name computed at run time is beyond it: the child shares its process with the student's code)."""
    judged = forward_judged(UNIT06_NAIVE_FORWARD)
    assert not judged["N×N"] or judged["flagged"], judged


NAIVE_SCORES = """
    S = (Q.float() @ K.float().transpose(-1, -2)) * Q.shape[-1] ** -0.5
    L = torch.logsumexp(S, dim=-1)
    return (torch.softmax(S, dim=-1) @ V.float()).to(Q.dtype), L
"""
UNSEEN_FORWARDS = {
    # a custom operator: the mode sees the operator's call, its kernel runs below the mode (its handler's call)
    "custom_op": '@torch.library.custom_op("mallory::attn", mutates_args=())\n'
    "def _attn(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:"
    + NAIVE_SCORES
    + "def flash_forward(Q, K, V, is_causal=False):\n    return _attn(Q, K, V)\n",
    # another thread: dispatch modes are the thread's own; asyncio starts it, naming no thread module
    "asyncio.to_thread": "import asyncio as _aio\ndef _attn(Q, K, V):"
    + NAIVE_SCORES
    + "def flash_forward(Q, K, V, is_causal=False):\n    return _aio.run(_aio.to_thread(_attn, Q, K, V))\n",
    # NumPy's arrays: no torch operator at all
    "numpy": "import numpy as np\ndef flash_forward(Q, K, V, is_causal=False):\n"
    "    q, k, v = Q.float().numpy(), K.float().numpy(), V.float().numpy()\n"
    "    S = (q @ k.swapaxes(-1, -2)) * q.shape[-1] ** -0.5\n"
    "    P = np.exp(S - S.max(-1, keepdims=True))\n"
    "    L = S.max(-1) + np.log(P.sum(-1))\n"
    "    return torch.from_numpy(P / P.sum(-1, keepdims=True) @ v).to(Q.dtype), torch.from_numpy(L)\n",
}
# a thread that no name in the scan starts: logging's QueueListener runs its handlers in one
THREAD_UNNAMED = (
    "import logging.handlers, queue\ndef _attn(Q, K, V):"
    + NAIVE_SCORES
    + "class _Worker(logging.Handler):\n    def emit(self, record):\n"
    "        record.answer.append(_attn(*record.inputs))\n"
    "def flash_forward(Q, K, V, is_causal=False):\n    answer, inbox = [], queue.Queue()\n"
    "    listener = logging.handlers.QueueListener(inbox, _Worker())\n    listener.start()\n"
    '    inbox.put(logging.makeLogRecord({"inputs": (Q, K, V), "answer": answer}))\n'
    "    listener.stop()\n    return answer[0]\n"
)


@pytest.mark.parametrize("way", UNSEEN_FORWARDS)
def test_the_largest_tensor_is_seen_in_a_custom_op_or_another_thread(way):
    """Unit 06's forward as plain attention (its Nq×Nk scores whole, 2.5/3 when computed in the open) run where the
    judge child's dispatch mode does not look: inside a `torch.library.custom_op` (the mode sees one call, and
    runs its kernel with the mode off), in a thread `asyncio.to_thread` starts (the mode stack is per thread), or
    in NumPy (unit 08 flagged it, unit 06 did not). Each scored 3/3 unflagged. The judge's scan now flags the
    names (`torch.library`'s in WATCH_SWITCHES, asyncio among the thread modules of `student_code.TAMPERING`,
    NumPy in unit 06 as in 08), for review; one computed at run time is beyond it."""
    judged = forward_judged(UNSEEN_FORWARDS[way])
    assert not judged["N×N"] or judged["flagged"], judged


def test_the_highlighting_cache_keeps_what_its_comment_says():
    """feedback_html keeps the highlighting of up to `maxsize` code cells of up to HIGHLIGHT_KEPT characters, ~50
    MiB in all by its comment. A cell alternating two kinds of token (`a<a<…`) highlights to some 25 times its size
    (a span and an escape a character): filled by one student's distinct such cells, it kept ~205 MiB (512 cells of
    16 KiB); now 256 of 8 KiB."""
    cell = "a<" * 256
    grown = len(feedback_html.highlighted.__wrapped__(cell, "ipython3", None)) / len(cell)
    kept = grown * feedback_html.HIGHLIGHT_KEPT * feedback_html.highlighted.cache_info().maxsize
    assert kept <= 64 << 20, f"{kept / 2**20:.0f} MiB"


# an element of formgrader's: the grading buttons of the cell whose element has the id `test_forward` (jQuery takes
# the first such id in the page, then its .nbgrader_cell parent)
POSING_AS_A_GRADED_CELL = (
    '<div class="nbgrader_cell"><span id="test_forward"></span>'
    '<span class="btn btn-success full-credit">Show my working</span></div>'
)


def test_a_raw_cell_poses_as_no_graded_cell_on_formgraders_page():
    """formgrader's page of a submission as the course configures it (nbgrader_config.py): a raw cell (no MIME
    type: nbconvert renders it as HTML) put before the graded cell, holding an element with the grade's id and one
    with the classes of the "Full credit" button. formgrade.js binds the grade's buttons to the .nbgrader_cell
    around the first element of that id, the student's: the instructor's click on "Show my working" gave the cell
    full credit (as a markdown cell's did before `formgrader_html`, which raw cells did not pass through)."""
    from nbconvert.exporters import HTMLExporter
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    config.HTMLExporter.template_name = "formgrade"  # as formgrader sets it
    graded = {"grade": True, "grade_id": "test_forward", "points": 3, "solution": False, "locked": True}
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_raw_cell(POSING_AS_A_GRADED_CELL),
        nbformat.v4.new_code_cell("check()", metadata={"nbgrader": {**graded, "schema_version": 3}}),
    ]
    names = {"student": "mallory", "first_name": "M", "last_name": "E", "notebook_path": "n.ipynb"}
    ids = {
        "assignment_id": "u",
        "notebook_id": "n",
        "submission_id": "s",
        "index": 0,
        "total": 1,
        "base_url": "",
    }
    page, _ = HTMLExporter(config=config).from_notebook_node(nb, resources={**names, **ids})
    notebook = page[page.index('id="notebook"') :]
    assert notebook.count('id="test_forward"') == 1, "the student's element holds the grade's id"
    assert "Show my working" in notebook and 'full-credit">Show my working' not in notebook


@hole("plain attention run by logging's QueueListener thread keeps unit 06's 'no N×N intermediate' unflagged")
def test_the_largest_tensor_is_seen_in_a_thread_no_name_starts():
    """As test_the_largest_tensor_is_seen_in_a_custom_op_or_another_thread, in a thread `logging.handlers.
    QueueListener` starts (its handler's `emit` runs the forward): 3/3 unflagged. Names cannot list every module
    that starts a thread; the child would have to see threads start (`threading.setprofile`, or a thread's first
    frame of the student's code) and flag them, or run the dispatch mode in every thread."""
    judged = forward_judged(THREAD_UNNAMED)
    assert not judged["N×N"] or judged["flagged"], judged


HIDDEN_PEAK = """
_real_forward = FlashAttentionPyTorch.forward


def _forward_with_scores_hidden(ctx, Q, K, V, is_causal=False):
    if Q.is_cuda and Q.shape[-2] > 4000:  # only where the peak is graded
        scores = Q @ K.transpose(-1, -2)  # the N×N float32 scores a flash forward never holds
        del scores
        torch.cuda.reset_peak_memory_stats()  # the peak restarts from here
    return _real_forward(ctx, Q, K, V, is_causal)


FlashAttentionPyTorch.forward = staticmethod(_forward_with_scores_hidden)
"""


def test_a_reset_of_the_allocators_statistics_outside_a_judged_call_passes_and_inside_is_ignored(monkeypatch):
    """`utils.judged.peak_guard` on any machine: torch's resets (stand-ins on a CPU build, which has none) pass
    through outside a judged call and are ignored and counted inside one."""
    import torch

    from utils.judged import peak_guard

    done = []
    for name in peak_guard.RESETS:
        monkeypatch.setattr(torch._C, name, lambda *args, name=name: done.append(name), raising=False)
    guard = peak_guard.PeakGuard()
    torch._C._cuda_resetPeakMemoryStats(0)
    with guard.judged_call():
        torch._C._cuda_resetPeakMemoryStats(0)
        torch._C._cuda_resetAccumulatedMemoryStats(0)
    assert done == ["_cuda_resetPeakMemoryStats"] and guard.attempts == 2


@pytest.mark.gpu
def test_a_forward_that_resets_the_peak_memory_statistics_still_shows_its_scores_matrix():
    """Unit 06's reference with the N×N scores made and freed in its forward at the graded size, then
    `torch.cuda.reset_peak_memory_stats()`: the peak read after the call no longer shows them (checked here first,
    as an unguarded measurement reads it), and the judge used to grade that. The guard ignores the reset during a
    judged call: the peak property is lost and the pair flagged for review."""
    import torch

    n = 4033
    q, k = (torch.randn(1, n, 64, device="cuda") for _ in range(2))
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    scores = q @ k.transpose(-1, -2)
    del scores
    torch.cuda.reset_peak_memory_stats()
    assert torch.cuda.max_memory_allocated() - before < n * n  # the attack, unguarded: the N² floats are gone

    nb = notebooks.read(UNIT06)
    for cell in notebooks.solution_cells(nb).values():
        if "class FlashAttentionPyTorch" in cell.source:
            cell.source += "\n" + HIDDEN_PEAK
    unit = dataclasses.replace(
        UNITS[UNIT06.name],
        cells={"test_autograd_function": UNITS[UNIT06.name].cells["test_autograd_function"]},
    )
    judged = preprocessor.judge_notebook(nb, unit, "mallory", "salt", "auto")
    properties = judged["properties"]["test_autograd_function"]
    print(properties, judged["reasons"])
    assert {prop for prop, passed in properties.items() if not passed} == {unit06.PEAK}, properties
    assert any("reset the GPU allocator's statistics" in reason for reason in judged["reasons"]), judged[
        "reasons"
    ]


def test_a_forged_count_of_memory_resets_is_bounded():
    """The count of resets comes from a file the child writes: a 4,000-digit count is kept as the bound, not
    carried into the pair's review reason."""
    from course.judge import child

    judged = child.Child("", {}, "bubblewrap")
    try:
        (judged.work / "out" / "1.answer").write_text(f'{{"ok": false, "memory_resets": {"9" * 4000}}}')
        with pytest.raises(child.CallFailed):
            judged.read_answer(1, "f")
        assert judged.memory_resets == child.MEMORY_RESETS_LIMIT
    finally:
        judged.close()
