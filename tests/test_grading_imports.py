"""The grading room imports without a circle: no module of course/grading/ reaches itself through its imports,
deferred ones (inside a function) included, so the room reads settings → intake → pool → merge → export."""

from __future__ import annotations

import ast
from pathlib import Path

from course import ROOT

ROOM = ROOT / "course" / "grading"
PACKAGE = "course.grading"


def imported(path: Path, modules: set[str]) -> set[str]:
    """The modules of the room that `path` imports anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == PACKAGE:
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE + "."):
            found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[2] for a in node.names if a.name.startswith(PACKAGE + ".")}
    return (found & modules) - {path.stem}


def import_graph(folder: Path) -> dict[str, set[str]]:
    modules = {path.stem for path in folder.glob("*.py")}
    return {path.stem: imported(path, modules) for path in folder.glob("*.py")}


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of `graph` (its modules in order, the first again at the end), or None."""
    state: dict[str, str] = {}  # "open" while on the path being walked, "done" after

    def walk(module: str, path: list[str]) -> list[str] | None:
        state[module] = "open"
        for other in sorted(graph[module]):
            if state.get(other) == "open":
                return path[path.index(other) :] + [other]
            if other not in state and (found := walk(other, path + [other])):
                return found
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state and (found := walk(module, [module])):
            return found
    return None


def test_the_circle_finder_finds_a_deferred_circle(tmp_path):
    (tmp_path / "grade.py").write_text("from course.grading import pool\n")
    (tmp_path / "pool.py").write_text("def jobs():\n    from course.grading.grade import cpu_count\n")
    (tmp_path / "lock.py").write_text("import os\n")
    assert circle(import_graph(tmp_path)) == ["grade", "pool", "grade"]
    (tmp_path / "pool.py").write_text("def jobs():\n    from course.grading.lock import grading_lock\n")
    assert circle(import_graph(tmp_path)) is None


def test_the_grading_room_has_no_import_circle():
    graph = import_graph(ROOM)
    assert {"grade", "pool", "similarity", "semester", "lms"} <= graph.keys()
    assert circle(graph) is None, " → ".join(circle(graph))
