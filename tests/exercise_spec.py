"""An exercise's text and its judge's cases side by side (units 03 and 04, issue 34 item 3: spec = judge): the
dtypes the text names, the dtypes the judge sends, and the judge's calls grouped by the student's function."""

import re
from collections.abc import Callable
from pathlib import Path

import torch
from judge_cases import recorded_calls

from course import bilingual, notebooks
from course.judge.core import Unit

DTYPES = ("float16", "bfloat16", "float32", "float64")


def calls_by_function(
    unit: Unit, work: Path, answers: dict[str, Callable] | None = None, seeds=(1, 2, 3)
) -> dict[str, list[tuple]]:
    """{function name: the arguments of each call}, over every graded cell of `unit` judged with each seed
    (an entry point's call, such as `utils.judged.sweeps.run`, is filed under the function it names first)."""
    calls: dict[str, list[tuple]] = {}
    for seed in seeds:
        for grade_id in unit.cells:
            for target, args in recorded_calls(unit, grade_id, work, answers, seed):
                name, args = (args[0], args[1:]) if "." in target else (target, args)
                calls.setdefault(name, []).append(args)
    return calls


def dtypes_sent(calls: list[tuple]) -> set[str]:
    """The dtypes of the tensors, and the torch dtypes named as strings, among the arguments of `calls`."""
    names = set()
    for args in calls:
        for arg in args:
            if isinstance(arg, torch.Tensor):
                names.add(str(arg.dtype).removeprefix("torch."))
            elif isinstance(arg, str) and arg.startswith("torch."):
                names.add(arg.removeprefix("torch."))
    return names


def exercise_text(notebook: Path, function: str) -> str:
    """The English half of the exercise's markdown cell: the one whose Deliverable line names `function`."""
    for cell in notebooks.read(notebook).cells:
        if cell.cell_type == "markdown" and f"**交付 · Deliverable:** `{function}(" in cell.source:
            return bilingual.halves(cell.source)[1]
    raise AssertionError(f"no exercise in {notebook.name} delivers {function}")


def dtypes_stated(text: str) -> set[str]:
    """The torch dtypes an exercise's text names."""
    return set(re.findall(r"\b(" + "|".join(DTYPES) + r")\b", text))
