"""Repository hygiene: notebooks carry no outputs, markdown cells are bilingual, nbgrader outputs stay out of git."""

import ast
import contextlib
import graphlib
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(
    p
    for top in ("source", "release")
    for p in (ROOT / top).rglob("*.ipynb")
    if ".ipynb_checkpoints" not in p.parts
)
CJK, LATIN = re.compile(r"[\u4e00-\u9fff]"), re.compile(r"[A-Za-z]{3,}")


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook_has_no_outputs(path):
    dirty = [
        i
        for i, c in enumerate(cells(path))
        if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count"))
    ]
    assert not dirty, f"{path.name}: cells {dirty} carry outputs; clear them before committing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_markdown_cells_are_bilingual(path):
    mono = [
        i
        for i, c in enumerate(cells(path))
        if c["cell_type"] == "markdown"
        and len("".join(c["source"]).strip()) > 40
        and not (CJK.search("".join(c["source"])) and LATIN.search("".join(c["source"])))
    ]
    assert not mono, f"{path.name}: markdown cells {mono} are not in both Chinese and English"


def test_nbgrader_outputs_are_ignored():
    for path in ("submitted/x", "autograded/alice/x", "feedback/x", "gradebook.db"):
        result = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT)
        assert result.returncode == 0, f"{path} is not ignored by .gitignore"
    assert subprocess.run(["git", "check-ignore", "-q", "autograded/README.md"], cwd=ROOT).returncode == 1


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_distributions() -> set[str]:
    """What `pip install .` brings: pyproject's [project].dependencies and, by the installed packages' metadata,
    what they require in turn (extras, such as the course's dev extra, left out)."""
    from importlib import metadata

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    todo, found = [Requirement(r) for r in project["dependencies"]], set()
    while todo:
        requirement = todo.pop()
        name = canonical(requirement.name)
        if name in found or (requirement.marker and not requirement.marker.evaluate({"extra": ""})):
            continue
        found.add(name)
        with contextlib.suppress(metadata.PackageNotFoundError):
            todo += [Requirement(r) for r in metadata.requires(requirement.name) or []]
    return found


def third_party_imports() -> dict[str, Path]:
    """{top-level module: a file importing it} of the code in course/ and utils/, anywhere in a file (lazy
    imports run too), the standard library and the repository's own packages left out; the notebook-cell
    fragments (wrong implementations, variants, attacks, the sample class) are not the course's code."""
    fragments = {"wrong", "variants", "redteam", "sample_class"}
    found = {}
    for path in sorted(p for top in ("course", "utils") for p in (ROOT / top).rglob("*.py")):
        if fragments.intersection(path.relative_to(ROOT).parts):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            else:
                continue
            for top in (name.split(".")[0] for name in names):
                if top not in sys.stdlib_module_names and not (ROOT / top).is_dir():
                    found.setdefault(top, path.relative_to(ROOT))
    return found


def test_the_course_runs_with_only_its_runtime_dependencies():
    """`pip install .` (no dev extra) must be enough to grade: course.judge.units imports every unit's judge
    (unit 04's uses hypothesis), and a missing import there fails every graded cell of every unit. The cluster
    extra (Ray) is imported only where it is asked for (`--ray`; tests/test_ray_grading.py checks that), the hub
    extra (JupyterHub) only by course.hub."""
    from importlib import metadata

    from packaging.requirements import Requirement

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    optional = extras["cluster"] + extras["hub"]
    runtime = runtime_distributions() | {canonical(Requirement(r).name) for r in optional}
    providers = metadata.packages_distributions()
    undeclared = {
        f"{module} ({path})": providers.get(module, ["not installed"])
        for module, path in third_party_imports().items()
        if not runtime.intersection(map(canonical, providers.get(module, [])))
    }
    assert not undeclared, f"imported but not a runtime dependency in pyproject.toml: {undeclared}"


def room_imports(room: Path) -> dict[str, set[str]]:
    """{module of the package folder `room` (course/judge, course/grading): the modules of it that it imports},
    anywhere in the file (lazy imports too)."""
    package = ".".join(room.relative_to(ROOT).parts) + "."
    modules = {path.stem for path in room.glob("*.py")}
    found = {}
    for path in room.glob("*.py"):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
        inner = {n.removeprefix(package).split(".")[0] for n in names if n.startswith(package)}
        found[path.stem] = inner & modules - {path.stem}
    return found


def test_the_judge_room_has_no_import_loop():
    """Each module of course/judge imports only modules below it (issue 45: bytecode and sandbox imported each
    other; what both need lives in `environment`)."""
    graphlib.TopologicalSorter(
        room_imports(ROOT / "course" / "judge")
    ).prepare()  # raises CycleError naming the loop


def test_the_grading_room_has_no_import_loop():
    """The grading room reads settings → intake → pool → merge → export without a loop (issue 46's Shape: grade,
    pool and similarity imported each other, and semester and lms; what they share lives in `resources`, `lock`
    and `semester`)."""
    graphlib.TopologicalSorter(room_imports(ROOT / "course" / "grading")).prepare()
