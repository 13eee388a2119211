"""The student bundle (`python -m course bundle`): no answers, no instructor modules, and every bundled notebook
runs top to bottom on CPU with nothing filled in — only the exercises, their self-checks and the cells listed
below (they call an exercise) fail. The notebooks run in a fresh kernel whose imports see only the bundle.

CI runs the notebook of unit 06 (about 15 s here); the others (about 3 minutes together on 2 cores) are marked
`gpu` and run on the GPU host.
"""

import ast
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import utils
from course import ROOT, bundle, notebooks
from course.layout import COURSE
from utils import hopper_results

# Cells that are neither exercises nor self-checks but call an exercise, so they fail while it is a stub.
DEPENDENTS = {
    "memory_bottleneck.ipynb": {"cell-20", "cell-23", "cell-28", "cell-29", "cell-31", "cell-37"},
    "io_aware.ipynb": {"cell-19", "cell-21", "cell-30", "cell-40", "cell-42"},
    "tiling.ipynb": {"0f9eb4f4", "775136f5"},
    "online_softmax.ipynb": {"384bd00c", "47ed83cc", "0e82530c"},
    "recomputation.ipynb": {"cell-12", "cell-13"},
    "flash_attention_pytorch.ipynb": {"cell-27", "cell-29", "cell-30"},
    "triton_basics.ipynb": set(),
    "flash_attention_triton.ipynb": set(),
    "systems_lab.ipynb": {"47e2654c", "ebb3b71e", "0be10639", "df57dbcb"},
    "hopper.ipynb": set(),
}
GPU_DEPENDENTS = {
    "systems_lab.ipynb": {"69a10a18"},
    "hopper.ipynb": {"cell-22"},
}  # cells that call an exercise only on a GPU
IN_CI = {"flash_attention_pytorch.ipynb"}

# The kernel's launcher: the editable install of the repository is removed from the import system, the bundle
# is first on sys.path, and the kernel refuses to start if `course` is still importable.
LAUNCHER = """
import importlib.util, sys
bundle = sys.argv.pop(1)
sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")]
sys.path_hooks[:] = [h for h in sys.path_hooks if "__editable__" not in getattr(h, "__module__", "")]
sys.path_importer_cache.clear()
sys.path[:] = [bundle] + [p for p in sys.path if p and p.rstrip("/") != {root!r}]
if importlib.util.find_spec("course") is not None:
    sys.exit("the instructor package is importable in the student's kernel")
if not importlib.util.find_spec("utils").origin.startswith(bundle):
    sys.exit("utils is not the bundle's")
from ipykernel import kernelapp
kernelapp.launch_new_instance()
"""

# Runs one notebook with errors allowed; prints {cell id: [grade_id, error name]} of the cells that failed.
DRIVER = """
import json, sys
import nbformat
from nbclient import NotebookClient
path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
NotebookClient(nb, timeout=600, kernel_name="bundle", allow_errors=True, skip_cells_with_tag="",
               resources={"metadata": {"path": sys.argv[2]}}).execute()
failed = {c.get("id"): [c.metadata.get("nbgrader", {}).get("grade_id"), o.ename]
          for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"}
print("FAILED " + json.dumps(failed))
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return bundle.build(tmp_path_factory.mktemp("bundle"))


def released_notebooks() -> list[Path]:
    return sorted(COURSE.release.glob("*/*.ipynb"))


def test_the_bundle_holds_the_release_utils_and_install_files(built):
    folder, archive = built
    units = sorted(p.parent.name for p in released_notebooks())
    assert sorted(p.parent.name for p in folder.glob("*/*.ipynb")) == units
    assert (folder / "utils" / "__init__.py").is_file()
    assert (folder / "GLOSSARY.md").read_bytes() == (ROOT / "course" / "glossary.md").read_bytes()
    # unit 10's H100 evidence, where the unit and utils.hopper_results find it
    for name in hopper_results.FILES:
        path = Path(hopper_results.RESULTS) / name
        assert (folder / path).read_bytes() == (ROOT / path).read_bytes(), path
    for path in released_notebooks():
        assert (folder / path.parent.name / path.name).read_bytes() == path.read_bytes()
    pyproject = (folder / "pyproject.toml").read_text()
    assert 'include = ["utils*"]' in pyproject and "nbgrader" not in pyproject and "torch" in pyproject
    assert "nbgrader" not in (folder / "requirements.txt").read_text()
    readme = (folder / "README_STUDENT.md").read_text()
    assert "pip install -e ." in readme and "安装" in readme and "Install" in readme
    with zipfile.ZipFile(archive) as zipped:
        names = {n.removeprefix(f"{bundle.NAME}/") for n in zipped.namelist() if not n.endswith("/")}
    assert names == {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_the_requirements_ask_for_the_triton_unit_10_needs():
    """Unit 10's tensor descriptors are new in Triton 3.4 (`utils.hopper`): the bundle must not accept less."""
    (triton,) = [d for d in bundle.student_dependencies() if d.startswith("triton")]
    assert triton.startswith("triton>=3.4"), triton


# What runs the notebooks: required, imported by none of them
NOTEBOOK_ENVIRONMENT = {"jupyterlab", "notebook", "ipykernel"}


def third_party_imports(sources) -> set[str]:
    """The top-level modules `sources` (Python texts) import, less the standard library, utils and course (the
    instructor package, reached only where installed: `utils.attention.course_kernels`)."""
    found = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"utils", "course"}


def test_the_bundle_requires_what_its_utils_and_notebooks_import_and_nothing_else():
    """Issue 47: the bundle asked for the instructor's hypothesis and copydetect, which no unit imports."""

    def name(requirement: str) -> str:
        return re.sub(r"[-_.]+", "-", re.split(r"[<>=!~ \[;]", requirement, maxsplit=1)[0]).lower()

    sources = [path.read_text(encoding="utf-8") for path in (ROOT / "utils").rglob("*.py")]
    sources += [
        cell.source
        for path in released_notebooks()
        for cell in notebooks.read(path).cells
        if cell.cell_type == "code"
    ]
    modules = importlib.metadata.packages_distributions()
    imported = {name(dist) for module in third_party_imports(sources) for dist in modules[module]}
    assert {name(d) for d in bundle.student_dependencies()} == imported | NOTEBOOK_ENVIRONMENT


def solution_regions() -> list[str]:
    """The text between BEGIN and END SOLUTION of every source notebook, one string per region, lines stripped."""
    regions = []
    for path in COURSE.source.glob("*/*.ipynb"):
        for cell in notebooks.read(path).cells:
            for found in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", cell.source, re.S):
                regions.append("\n".join(line.strip() for line in found.splitlines() if line.strip()))
    return [r for r in regions if r]


def test_no_answer_and_no_instructor_module_is_bundled(built):
    folder, _ = built
    regions = solution_regions()
    assert len(regions) >= 10  # every unit has graded exercises
    for path in (p for p in folder.rglob("*") if p.is_file()):
        assert "course" not in path.relative_to(folder).parts, path
        if path.suffix in (".py", ".ipynb", ".md", ".txt", ".toml"):
            text = bundle.normalised(bundle.bundled_text(path))
            assert not [r[:60] for r in regions if r in text], path
    assert bundle.find_leaks(folder, COURSE.source) == []


def test_the_scan_finds_a_planted_answer_and_an_instructor_module(built, tmp_path):
    folder, _ = built
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    answer = solution_regions()[0]
    with (copy / "utils" / "messages.py").open("a") as out:
        out.write("\n" + "\n".join("    " + line for line in answer.splitlines()) + "\n")
    shutil.copytree(ROOT / "course" / "reference", copy / "course" / "reference")
    leaks = bundle.find_leaks(copy, COURSE.source)
    assert any("utils/messages.py" in leak and "answer of" in leak for leak in leaks)
    assert any("course/reference" in leak and "instructor module" in leak for leak in leaks)


def test_a_folder_that_is_not_a_bundle_is_never_overwritten(tmp_path):
    (tmp_path / bundle.NAME).mkdir()
    (tmp_path / bundle.NAME / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not a bundle"):
        bundle.build(tmp_path)
    assert (tmp_path / bundle.NAME / "notes.txt").read_text() == "mine"


def packages_outside_the_course() -> list[str]:
    """The PYTHONPATH folders a student would have too (e.g. a `pip install --target` folder on a GPU host):
    every one but the course's own folder."""
    entries = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return [p for p in entries if Path(p).resolve() != ROOT and ROOT not in Path(p).resolve().parents]


def kernel_spec(tmp: Path, folder: Path) -> Path:
    """A Jupyter path whose kernel `bundle` starts through LAUNCHER."""
    launcher = tmp / "launch.py"
    launcher.write_text(LAUNCHER.replace("{root!r}", repr(str(ROOT))))
    spec = tmp / "jupyter" / "kernels" / "bundle"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-s", str(launcher), str(folder), "-f", "{connection_file}"]
    # the kernel's own children (isolated checks) import the bundle's utils
    env = {"PYTHONPATH": os.pathsep.join([str(folder), *packages_outside_the_course()])}
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "language": "python", "env": env}))
    return tmp / "jupyter"


def notebook_params() -> list:
    return [
        pytest.param(
            path.parent.name, path.name, marks=[] if path.name in IN_CI else [pytest.mark.gpu], id=path.name
        )
        for path in released_notebooks()
    ]


@pytest.mark.parametrize(("unit", "name"), notebook_params())
def test_a_bundled_notebook_fails_only_in_its_exercises(built, tmp_path, unit, name):
    folder, _ = built
    nb_path = folder / unit / name
    jupyter = kernel_spec(tmp_path, folder)
    run = subprocess.run(
        [sys.executable, "-s", "-c", DRIVER, str(nb_path), str(nb_path.parent)],
        cwd=tmp_path,
        env={
            "PYTHONPATH": os.pathsep.join(packages_outside_the_course()),
            "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
            "JUPYTER_PATH": str(jupyter),
            "HOME": str(tmp_path),
            "TQDM_DISABLE": "1",
        },
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert "FAILED " in run.stdout, run.stdout[-3000:] + run.stderr[-3000:]
    failed = json.loads(run.stdout.split("FAILED ", 1)[1])
    nb = notebooks.read(nb_path)
    exercises = {c.get("id") for c in nb.cells if notebooks.meta(c).get("solution")}
    active = utils.mode().is_gpu  # on a GPU the GPU-only self-checks run (and fail) too
    checks = {
        c.get("id") for c in notebooks.test_cells(nb).values() if active or not notebooks.is_gpu_only(c)
    }
    dependents = DEPENDENTS.get(name, set()) | (GPU_DEPENDENTS.get(name, set()) if active else set())
    unexpected = {cell: why for cell, why in failed.items() if cell not in exercises | checks | dependents}
    assert not unexpected, f"cells that fail in {name} without calling an exercise: {unexpected}"
    assert checks <= set(failed), f"self-checks that pass with nothing filled in: {checks - set(failed)}"
    assert dependents <= set(failed), f"listed dependents that no longer fail: {dependents - set(failed)}"
