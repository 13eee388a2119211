"""`python -m course wrong [UNIT] [NAME]`: the wrong implementations as a catalogue to teach from — each one's
change to today's reference answer (a diff, coloured on a terminal), its bilingual explanation and the test
cells that must catch it."""

from __future__ import annotations

import difflib
import sys

from course import wrong
from course.layout import COURSE, Course
from utils.messages import bilingual

COLOURS = {"+": "\033[32m", "-": "\033[31m", "@": "\033[36m"}
BOLD, RESET = "\033[1m", "\033[0m"


def change(impl: wrong.WrongImpl) -> list[str]:
    """A patch as a unified diff against today's reference; a whole cell as itself, after why it is whole."""
    if not impl.patched:
        why = f" ({impl.whole})" if impl.whole else ""
        return [bilingual("整个单元格", "whole cell") + why, *impl.body.splitlines()]
    before = wrong.reference(impl.path, impl.notebook, impl.replaces).splitlines()
    diff = difflib.unified_diff(before, impl.body.splitlines(), "reference", impl.name, lineterm="")
    return list(diff)[2:]


def entry(unit: str, impl: wrong.WrongImpl, colour: bool) -> str:
    paint = (lambda code, text: f"{code}{text}{RESET}") if colour else (lambda code, text: text)
    lines = [
        paint(BOLD, f"{unit}/{impl.name}  ({impl.notebook}, {impl.replaces})"),
        *(f"  {line}" for line in impl.explanation.splitlines()),
        "  " + bilingual("必须失分", "must fail") + ": " + ", ".join(impl.must_fail),
        "",
    ]
    for line in change(impl):
        code = COLOURS.get(line[:1]) if impl.patched else None
        lines.append(paint(code, line) if code else line)
    return "\n".join(lines) + "\n"


def catalogue(course: Course, unit: str | None, name: str | None, colour: bool) -> str:
    """Every wrong implementation of `unit` (all units when None) whose name contains `name`."""
    shown = [
        entry(u, impl, colour)
        for u in course.select([unit] if unit else None)
        for impl in wrong.load(course.wrong / u)
        if not name or name in impl.name
    ]
    if not shown:
        raise ValueError(
            bilingual(f"没有名字含 {name!r} 的错误实现", f"no wrong implementation named like {name!r}")
        )
    return "\n".join(shown)


def main(unit: str | None = None, name: str | None = None, course: Course = COURSE) -> int:
    print(catalogue(course, unit, name, sys.stdout.isatty()), end="")
    return 0
