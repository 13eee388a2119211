"""The similarity check compares what is run (issue 45, principle 4): a solution cell handed in as markdown (which
nbgrader turns back into code) is compared as code; code made at run time (exec of a packed string, code objects
built by hand) is flagged for review with the reason, since no text comparison sees it; the report quotes a bounded amount
of each pair's code. The class is checked without being graded (no notebook runs: seconds); code made at run time that
the text hides is seen by the judge's child as it runs (unit 06's judge, two sandboxed children)."""

import base64
import codecs
import dataclasses
import importlib.util
import io
import marshal
import shutil
import zipfile
import zlib

import torch
from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT
from test_class_review import EVE_LSE, GUS_LSE

from course import ROOT, notebooks
from course.grading import similarity, submissions
from course.judge import preprocessor
from course.judge.core import Cell
from course.judge.units import UNITS
from course.layout import Course

NOTEBOOK = "logsumexp.ipynb"
UNIT06 = ROOT / "source" / "06_flash_attention_pytorch" / "flash_attention_pytorch.ipynb"
PUBLISHED = submissions.reference_answers(notebooks.read(FIXTURE / "source" / UNIT / NOTEBOOK))["lse_impl"]
PACKED = base64.b64encode(zlib.compress(PUBLISHED.encode())).decode()
DYNAMIC = {  # the published answer, run from a string no text comparison reads
    "exec of zlib and base64": f'import base64, zlib\nexec(zlib.decompress(base64.b64decode("{PACKED}")))',
    "__import__ and compile": (
        f'code = compile(__import__("zlib").decompress(__import__("base64").b64decode("{PACKED}")), "x", "exec")\n'
        "eval(code)"
    ),
    "a function built by hand": (
        "import types\n"
        f'_unit = compile(__import__("zlib").decompress(__import__("base64").b64decode("{PACKED}")), "x", "exec")\n'
        'logsumexp = types.FunctionType(_unit.co_consts[0], globals(), "logsumexp")'
    ),
    "marshal": f"import marshal\nexec(marshal.loads({marshal.dumps(compile(PUBLISHED, 'x', 'exec'))!r}))",
    "an IPython magic": f'%time exec(__import__("zlib").decompress(__import__("base64").b64decode("{PACKED}")))',
    "codecs": f"import codecs\nexec(codecs.decode({codecs.encode(PUBLISHED, 'rot13')!r}, 'rot13'))",
    # The red team's (2026-11-29): builtins reached without naming them, exec by a computed name
    "a builtin's __self__": f'getattr(print.__self__, "cexe"[::-1])({PUBLISHED[::-1]!r}[::-1])',
    "a module's __builtins__ by key": f'import math\nvars(math)["__builtins__"]["ex" + "ec"]({PUBLISHED[::-1]!r}[::-1])',
    "a function's __globals__": (
        f'_b = (lambda: 0).__globals__.get("__buil" + "tins__")\ngetattr(_b, "cexe"[::-1])({PUBLISHED[::-1]!r}[::-1])'
    ),
    "runpy": 'import runpy\nglobals().update(runpy.run_path("notes.txt"))',
    "torch.load of a pickle": 'import torch\nlogsumexp = torch.load("weights.bin", weights_only=False)',
    "numpy's load of a pickle": 'import numpy as np\nlogsumexp = np.load("table.bin", allow_pickle=True).item()',
    "a callable let into torch.load": "import torch\ntorch.serialization.add_safe_globals([type(lambda: 0)])",
    "a module's loader running a text file": (
        'import numpy as np\nlogsumexp = type(np.__loader__)("h", "notes.txt").load_module().logsumexp'
    ),
    "imp": 'import imp\nlogsumexp = imp.load_source("h", "notes.txt").logsumexp',
    "torch.load with a pickle module": 'import torch, copyreg\nlogsumexp = torch.load("w.bin", pickle_module=copyreg)',
    # The attacker's eye (2026-11-29): TorchScript compiled from a string, the judge's audit hook looked for
    "TorchScript from a string": f"import torch\n_unit = torch.jit.CompilationUnit({PUBLISHED[::-1]!r}[::-1])",
    "every object through gc": 'import gc\n_hooks = [o for o in gc.get_objects() if type(o).__name__ == "Watch"]',
}


def check_class(tmp, answers: dict[str, str], threshold: float = similarity.DEFAULT_THRESHOLD) -> Course:
    """The log-sum-exp notebook of each student ({student: their lse_impl}), checked; the course."""
    course = Course(tmp / "course", FIXTURE_COURSE.wrong)
    for folder, root in ((course.source, FIXTURE / "source"), (tmp / "release", FIXTURE / "release")):
        (folder / UNIT).mkdir(parents=True)
        shutil.copy(root / UNIT / NOTEBOOK, folder / UNIT)
    for student, answer in answers.items():
        submissions.write_student(
            tmp / "release" / UNIT, course.source / UNIT, tmp / "class" / student / UNIT, {"lse_impl": answer}
        )
    similarity.check(course, tmp / "class", [UNIT], threshold)
    return course


def flags(course: Course) -> dict[str, str]:
    return {
        key.split("/")[0]: " ".join(entry["reasons"]) for key, entry in similarity.read_flags(course).items()
    }


def test_the_published_answer_run_from_a_string_is_flagged_with_the_reason(tmp_path):
    course = check_class(
        tmp_path, {"gus_honest": GUS_LSE} | {f"s{i}": code for i, code in enumerate(DYNAMIC.values())}
    )
    found = flags(course)
    assert "gus_honest" not in found
    for i, how in enumerate(DYNAMIC):
        assert "code made at run time" in found[f"s{i}"], how
        assert "reference" not in found[f"s{i}"], how  # the text comparison alone does not see the copy


def test_a_solution_cell_handed_in_as_markdown_is_compared_as_code(tmp_path):
    """nbgrader grades a solution cell handed in as markdown as code: the copy in it is flagged like the plain one."""
    course = check_class(tmp_path, {"gus_honest": GUS_LSE, "plain": PUBLISHED, "markdown": PUBLISHED})
    path = tmp_path / "class" / "markdown" / UNIT / NOTEBOOK
    nb = notebooks.read(path)
    cell = notebooks.solution_cells(nb)["lse_impl"]
    cell.cell_type = "markdown"
    del cell["outputs"], cell["execution_count"]
    notebooks.write(nb, path)
    similarity.check(course, tmp_path / "class", [UNIT], similarity.DEFAULT_THRESHOLD)
    found = flags(course)
    assert "reference solution (solution_cells.py) 100%" in found["plain"], found
    assert "reference solution (solution_cells.py) 100%" in found["markdown"], found


def test_a_huge_comment_makes_a_bounded_report_that_says_it_was_cut(tmp_path):
    """One 15 MiB comment made a 525 MiB report: each code a pair quotes is cut, and the report says so (a comment
    just under CODE_LIMIT here: longer code is flagged unread, below)."""
    comment = "<" * (similarity.CODE_LIMIT - 2 * len(PUBLISHED))
    huge = PUBLISHED.replace("    top = max(xs)", "    # " + comment + "\n    top = max(xs)", 1)
    course = check_class(tmp_path, {"gus_honest": GUS_LSE, "plain": PUBLISHED, "huge": huge})
    report = course.root / similarity.FOLDER / UNIT / "report.html"
    text = report.read_text(encoding="utf-8")
    pairs = text.count("Test file:")
    assert 2 <= pairs <= 3 * similarity.PAIRS_QUOTED
    bound = pairs * 10 * similarity.QUOTED + (200 << 10)  # the pairs, the plots and the page
    assert report.stat().st_size < bound, (report.stat().st_size, bound)
    code = (course.root / similarity.FOLDER / UNIT / "students" / "huge.py").read_text(encoding="utf-8")
    assert f"{len(code) - similarity.QUOTED:,} more characters cut" in text
    assert "Note from the course" in text and "quoted codes were cut" in text
    assert "reference solution (solution_cells.py) 100%" in flags(course)["huge"]


def test_the_report_quotes_a_few_pairs_of_each_student(tmp_path):
    """Seven copies of the published answer: 28 pairs match, each student is quoted in PAIRS_QUOTED of them at most,
    and the report says how many were left out; every copy is still flagged."""
    copies = {f"s{i}": PUBLISHED for i in range(7)}
    course = check_class(tmp_path, copies)
    text = (course.root / similarity.FOLDER / UNIT / "report.html").read_text(encoding="utf-8")
    quoted = [name for line in text.splitlines() for name in copies if f"students/{name}.py</i>" in line]
    assert max(quoted.count(name) for name in copies) == similarity.PAIRS_QUOTED
    assert "pairs left out" in text and " 0 pairs left out" not in text
    assert set(flags(course)) == set(copies)


def test_a_python_file_handed_in_beside_the_notebook_is_compared(tmp_path):
    """The published answer in helper.py, imported by the solution cell (the kernel runs in the submission's
    folder): compared with the reference (65 %: the import lines are hers; before, her code was the import line
    alone, matching nothing)."""
    helper = tmp_path / "class" / "mallory" / UNIT / "helper.py"
    helper.parent.mkdir(parents=True)
    helper.write_text("import math\n\n\n" + PUBLISHED + "\n", encoding="utf-8")
    course = check_class(tmp_path, {"gus_honest": GUS_LSE, "mallory": "from helper import logsumexp"}, 0.6)
    assert "the reference solution (solution_cells.py)" in flags(course)["mallory"], flags(course)


def test_a_compiled_file_or_a_zip_handed_in_beside_the_notebook_is_flagged(tmp_path):
    """Python imports helper.pyc (no source beside it) and modules from a zip put on sys.path, whatever its name:
    the check cannot read either, so the submission is flagged for review (before: unflagged, the cell a plain
    import matching nothing)."""
    for student in ("mallory", "eve"):
        (tmp_path / "class" / student / UNIT).mkdir(parents=True)
    compiled = (
        importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(compile(PUBLISHED, "helper.py", "exec"))
    )
    (tmp_path / "class" / "mallory" / UNIT / "helper.pyc").write_bytes(compiled)
    with zipfile.ZipFile(tmp_path / "class" / "eve" / UNIT / "notes.txt", "w") as archive:
        archive.writestr("helper.py", PUBLISHED)
    answers = {
        "gus_honest": GUS_LSE,
        "mallory": "from helper import logsumexp",
        "eve": 'import sys\nsys.path.insert(0, "notes.txt")\nfrom helper import logsumexp',
    }
    found = flags(check_class(tmp_path, answers))
    assert "gus_honest" not in found
    assert "helper.pyc" in found["mallory"] and "review" in found["mallory"], found
    assert "notes.txt" in found["eve"] and "review" in found["eve"], found


def test_a_python_file_in_another_source_encoding_is_compared_as_python_reads_it(tmp_path):
    """The published answer in helper.py declared `# coding: utf-7`, its letters written as UTF-7's base64 runs:
    Python runs it as the answer; the check read its bytes as UTF-8 (`+AGQ-+AGU-+AGY- …`), matching nothing. It now
    decodes the file as Python does (before: unflagged)."""
    helper = tmp_path / "class" / "mallory" / UNIT / "helper.py"
    helper.parent.mkdir(parents=True)
    source = "import math\n\n\n" + PUBLISHED + "\n"
    hidden = "".join(
        f"+{base64.b64encode(c.encode('utf-16-be')).decode().rstrip('=')}-"
        if c.isalpha()
        else c.replace("+", "+-")
        for c in source
    )
    helper.write_bytes(b"# coding: utf-7\n" + hidden.encode())
    assert helper.read_bytes().decode("utf-7").endswith(source)
    course = check_class(tmp_path, {"gus_honest": GUS_LSE, "mallory": "from helper import logsumexp"}, 0.6)
    assert "the reference solution (solution_cells.py)" in flags(course).get("mallory", ""), flags(course)


class Packed:
    """Pickled, the published answer: unpickling it evaluates a string that defines `logsumexp` and returns it."""

    def __reduce__(self):
        return eval, (f"(lambda ns: (exec({PUBLISHED!r}, ns), ns['logsumexp'])[1])({{}})",)


def judged_unit06(added: str) -> dict:
    """Unit 06's reference notebook with `added` at the end of its first solution cell, judged by a stand-in cell
    (one call into the judge's child, which loads the student's module); the judge's summary."""
    nb = notebooks.read(UNIT06)
    first = notebooks.solution_cells(nb)[UNITS[UNIT06.name].student_cells[0]]
    first.source += "\n" + added

    def check(j):
        with j.case("p", "the module loads"):
            j.expect(j.call("math.sqrt", 4.0).result == 2.0, "", "")

    unit = dataclasses.replace(
        UNITS[UNIT06.name], cells={"test_forward": Cell("test_forward", {"p": 1}, check)}
    )
    return preprocessor.judge_notebook(nb, unit, "mallory", "salt", "auto")


def test_torch_load_told_to_unpickle_by_the_environment_is_flagged():
    """The published answer pickled (torch.save's legacy format) into the solution cell, loaded after
    `os.environ.update({"TORCH_FORCE_NO_" + "WEIGHTS_ONLY_LOAD": "1"})`: torch.load then unpickles it whatever its
    default, and the text shows two assignments of plain calls; neither the similarity check nor the judge's scan
    flagged it. The judge's child now sees it run (an audit hook): the pair is flagged for review. The reference
    with a function of its own added is not (the course's code and torch compile and execute for themselves)."""
    packed = io.BytesIO()
    torch.save(Packed(), packed, _use_new_zipfile_serialization=False)
    cell = (
        "import io, os, torch\n"
        '_ = os.environ.update({"TORCH_FORCE_NO_" + "WEIGHTS_ONLY_LOAD": "1"})\n'
        f"logsumexp = torch.load(io.BytesIO({packed.getvalue()!r}))"
    )
    assert similarity.made_at_run_time(cell) == set()  # the text alone shows nothing
    flagged = judged_unit06(cell)
    score, points = flagged["scores"]["test_forward"]
    assert score == points  # the module loaded: the answer was usable
    reasons = " ".join(flagged["reasons"])
    assert "code made at run time, seen in the judge's child" in reasons and "builtin__.eval" in reasons, (
        reasons
    )
    honest = judged_unit06("def logsumexp(xs):\n    return max(xs)\n")
    assert honest["scores"] == flagged["scores"] and not honest["flagged"], honest["reasons"]


def test_the_reason_names_a_few_places_however_many_there_are(tmp_path):
    """1,000 files handed in that each run code at run time (500 `.py` of `exec`, 500 `.pyc`), their names 200
    characters long: the reason (a cell of grades.csv, an entry of flags.json) named every one, some 400 KB in one
    cell (a spreadsheet shows 32,767 characters); it now names REASON_PLACES of them and counts the rest."""
    folder = tmp_path / "class" / "mallory" / UNIT
    folder.mkdir(parents=True)
    for i in range(500):
        (folder / f"{'x' * 190}{i:04}.py").write_text("exec('x = 1')\n", encoding="utf-8")
        (folder / f"{'y' * 190}{i:04}.pyc").write_bytes(b"")
    reasons = flags(check_class(tmp_path, {"gus_honest": GUS_LSE, "mallory": "from helper import logsumexp"}))
    assert "code made at run time" in reasons["mallory"] and "995 more" in reasons["mallory"], reasons[
        "mallory"
    ][-300:]
    assert len(reasons["mallory"]) < 4000


def test_the_published_answer_diluted_by_unused_code_is_flagged(tmp_path):
    """The published answer followed by forty unused helper functions (5 KB): the share of her code that matches
    the reference fell to a few percent, under every threshold, and she was not flagged; the share of the
    reference found in her code is 100 %, and it now counts. Gus and Eve, who wrote their own, stay unflagged."""
    junk = "\n".join(
        f"def _helper_{i}(a, b):\n    total = a * {i} + b\n    for k in range({i + 2}):\n"
        f"        total = (total ^ k) % {97 + i}\n    return [total] * {i + 1}\n"
        for i in range(40)
    )
    answers = {"gus_honest": GUS_LSE, "eve_own": EVE_LSE, "diluted": PUBLISHED + "\n\n" + junk}
    found = flags(check_class(tmp_path, answers))
    assert "reference solution (solution_cells.py) 100%" in found.get("diluted", ""), found
    assert set(found) == {"diluted"}, found


def test_code_too_long_to_compare_is_flagged_instead_of_compared(tmp_path):
    """1.1 MB of Python beside the notebook (digits here, which lex fast: the costly tokens, `x.x.x…`, took a minute
    for 2 MB, and one student's 32 MiB held the class's check some 15 minutes) is flagged for review, neither
    compared nor scanned (before: lexed whole, unflagged). Gus's code is compared as before."""
    helper = tmp_path / "class" / "mallory" / UNIT / "helper.py"
    helper.parent.mkdir(parents=True)
    helper.write_text("x = " + "1" * 1_100_000 + "\n", encoding="utf-8")
    found = flags(check_class(tmp_path, {"gus_honest": GUS_LSE, "mallory": PUBLISHED}))
    assert "too long" in found.get("mallory", "") and "review" in found["mallory"], found
    assert set(found) == {"mallory"}, found
    compared = tmp_path / "course" / similarity.FOLDER / UNIT / "students"
    assert sorted(p.name for p in compared.iterdir()) == ["gus_honest.py"]
