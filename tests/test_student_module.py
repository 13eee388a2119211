"""utils.judged.student_module: the judge and the notebook's self-checks build the student's code the same way (the
unit's preamble and its student cells, nothing else of the notebook), so a notebook global or a helper in an
added cell fails the visible self-check, naming it, instead of costing points silently when graded."""

import ast
import re

import pytest
from notebook_run import ROOT, error_of, run_cells

from course import notebooks
from course.judge import units
from course.judge.student_code import module_source, solution_sources
from utils.judged import student_module
from utils.judged.student_module import LAYOUTS, PLAIN, Layout, missing_names

SOURCES = {path.name: path for path in sorted(ROOT.glob("source/*/*.ipynb"))}


def defined_at_top(source: str) -> set[str]:
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def test_every_judge_builds_with_its_notebooks_layout():
    assert set(LAYOUTS) == set(units.UNITS) == set(SOURCES)
    for name, path in SOURCES.items():
        assert units.UNITS[name].layout is LAYOUTS[name]
        cells = solution_sources(notebooks.read(path), list(LAYOUTS[name].cells))
        assert [grade_id for grade_id, _ in cells] == list(LAYOUTS[name].cells), name  # notebook order
        for grade_id, source in cells:  # the object the kernel finds the cell by is defined there
            assert LAYOUTS[name].cells[grade_id] in defined_at_top(source), (name, grade_id)


def test_the_reference_solutions_read_only_what_the_preamble_and_their_cells_define():
    for name, path in SOURCES.items():
        layout = LAYOUTS[name]
        assert (
            missing_names(solution_sources(notebooks.read(path), list(layout.cells)), layout.preamble) == {}
        )


def test_missing_names_are_notebook_globals_and_helpers_of_other_cells():
    cells = [
        (
            "first",
            "import numpy as np\nLIMIT = 4\n\ndef double(x):\n    global SEEN\n    SEEN = True\n    return 2 * x\n",
        ),
        (
            "second",
            "def attention(q, k):\n"
            "    s = scores(q, k) * SCALE + np.pi + LIMIT + double(1) + len(q) + SEEN\n"
            "    rows = [DEVICE for _ in s]\n"
            "    return (lambda: helper_in_lambda)(), rows, math.pi, torch.ones(1)\n"
            "\n"
            "class Tile:\n    size = BLOCK\n"
            "print(PRINTED_ONLY)  # a demo line: not in the module\n",
        ),
    ]
    assert missing_names(cells, PLAIN) == {
        name: ["second"] for name in ("BLOCK", "DEVICE", "SCALE", "helper_in_lambda", "scores")
    }
    assert missing_names([("star", "from torch import *\n\ndef f():\n    return anything\n")], PLAIN) == {}
    earlier = [("forward", "class F:\n    def backward(self):\n        return launch_dq()\n")]  # unit 08
    assert missing_names(earlier, PLAIN) == {"launch_dq": ["forward"]}
    assert missing_names(earlier, PLAIN, not_run={"launch_dq"}) == {}  # a later cell, not run yet


def test_the_message_names_what_is_missing_what_the_preamble_provides_and_where_helpers_go():
    message = student_module.missing_names_message(
        {"DEVICE": ["standard_attention"]}, LAYOUTS["memory_bottleneck.ipynb"]
    )
    zh, en = message.split(" / ", 1)
    assert "`DEVICE`" in zh and "math, torch, utils" in zh and "请把辅助函数和常量放进解答单元格内" in zh
    assert (
        "`DEVICE`" in en
        and "math, torch, utils" in en
        and "Put helpers and constants inside the solution cell" in en
    )


def test_the_module_is_the_same_for_the_judge_and_the_notebook():
    nb = notebooks.read(SOURCES["memory_bottleneck.ipynb"])
    layout = LAYOUTS["memory_bottleneck.ipynb"]
    cells = solution_sources(nb, list(layout.cells))
    assert module_source(nb, list(layout.cells), layout.preamble) == student_module.module_source(
        cells, layout.preamble
    )


def test_how_grading_works_lists_the_names_provided():
    for name, path in SOURCES.items():
        (cell,) = [
            c
            for c in notebooks.read(path).cells
            if c.cell_type == "markdown" and "How grading works" in c.source[:120]
        ]
        provided = LAYOUTS[name].provided()
        assert provided and all(f"`{n}`" in cell.source for n in provided), name
        assert (
            "辅助函数和常量请写在解答单元格内" in cell.source
            and "put helpers and constants inside the solution cell" in cell.source
        )


# (unit, notebook, solution cell, its first self-check, (old, new) that reads a notebook global, the global)
CASES = [
    (
        "memory_bottleneck.ipynb",
        "standard_attention",
        "test_standard_attention",
        ("torch.arange(n_k, device=S.device)", "torch.arange(n_k, device=DEVICE)"),
        "DEVICE",
        "math, torch, utils",
    ),
    (
        "online_softmax.ipynb",
        "os_online_softmax",
        "test_online_softmax",
        (
            "work = torch.promote_types(x.dtype, torch.float32)",
            "work = torch.float64 if ON_GPU else torch.float32",
        ),
        "ON_GPU",
        "finite_max, math, torch, utils",
    ),
]


@pytest.mark.parametrize(("notebook", "solution", "selfcheck", "edit", "global_name", "provided"), CASES)
def test_the_visible_self_check_fails_on_what_grading_would_not_see(
    tmp_path, notebook, solution, selfcheck, edit, global_name, provided
):
    """The notebook up to its first self-check, run as a student would: the solution cell reading a notebook
    global, then its helper moved into an added cell, then the reference again (cells re-run in the kernel,
    the notebook never saved)."""
    nb = notebooks.read(SOURCES[notebook])
    ids = [notebooks.meta(c).get("grade_id") for c in nb.cells]
    solution_cell, check_cell = nb.cells[ids.index(solution)], nb.cells[ids.index(selfcheck)]
    reference = notebooks.without_markers(solution_cell.source)
    prefix = [c.source for c in nb.cells[: ids.index(solution)] if c.cell_type == "code"]
    assert edit[0] in reference
    with_global = reference.replace(edit[0], edit[1])
    helper = "def helper_of_mine(*values):\n    return values if len(values) > 1 else values[0]\n"
    with_helper = reference.replace("    return ", "    return helper_of_mine(", 1).rstrip() + ")\n"
    cells = run_cells(
        [
            *prefix,
            with_global,
            check_cell.source,
            helper,
            with_helper,
            check_cell.source,
            reference,
            check_cell.source,
        ],
        tmp_path,
    )
    global_check, helper_check, reference_check = (cells[len(prefix) + i] for i in (1, 4, 6))
    for check, missing in ((global_check, global_name), (helper_check, "helper_of_mine")):
        error = error_of(check)
        assert error.startswith("AssertionError"), error
        assert (
            f"`{missing}`" in error
            and provided in error
            and "Put helpers and constants inside the solution cell" in error
        )
        assert "请把辅助函数和常量放进解答单元格内" in error
    assert error_of(reference_check) == "" and "self-check passed" in "".join(
        o.get("text", "") for o in reference_check.outputs
    )


def test_kernel_cells_are_the_cells_that_defined_each_object(tmp_path):
    """In the kernel: a deliverable moved to an added cell is found there; a cell not run yet is left out."""
    layout = Layout("demo.ipynb", {"first": "f", "second": "g", "third": "h"}, PLAIN)
    cells = run_cells(
        [
            "import utils\nfrom utils.judged import student_module",
            "def f():\n    return 1\nprint('demo')",
            "def g():\n    return f() + 1",
            "def g():\n    return f() + 2  # a fixed copy in an added cell",
            f"layout = student_module.Layout('demo.ipynb', {layout.cells!r}, 'import torch')\n"
            "print(student_module.kernel_cells(layout))\n"
            "student_module.LAYOUTS['demo.ipynb'] = layout\n"
            "print('g =', student_module.judged(g, 'demo.ipynb')())\n"
            "print('same object:', student_module.judged(g, 'demo.ipynb') is g)\n"
            "print('others as they are:', student_module.judged(len, 'demo.ipynb') is len)",
        ],
        tmp_path,
    )
    out = "".join(o.get("text", "") for o in cells[-1].outputs)
    assert error_of(cells[-1]) == "", error_of(cells[-1])
    found = re.search(r"^\[.*\]$", out, re.MULTILINE).group(0)
    assert "('first', \"def f():" in found and "a fixed copy" in found and "third" not in found
    assert "g = 3" in out and "same object: False" in out and "others as they are: True" in out
