"""pyproject.toml and environment.yml name the same packages with the same version ranges (one documented
exception: conda's numpy bound, see environment.yml)."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONDA_NAMES = {"pytorch": "torch"}  # conda package name -> pip distribution name
CONDA_ONLY = {"python", "pip"}
# Conda cannot ask for "triton >= 3.7 or numpy < 2.4" (Triton < 3.7's CPU interpreter breaks with NumPy >= 2.4);
# pip installs get triton >= 3.7 from course.sh on CPU machines, conda environments get numpy < 2.4.
CONDA_STRICTER = {"numpy": ">=1.26,<2.4"}


def split(requirement: str) -> tuple[str, str]:
    name, spec = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*(.*)", requirement).groups()
    return name.lower().replace("_", "-"), spec.replace(" ", "")


def pip_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + project["optional-dependencies"]["dev"]
    return dict(split(r) for r in requirements)


def conda_requirements() -> dict[str, str]:
    found = {}
    text = (ROOT / "environment.yml").read_text()
    for line in text.split("\ndependencies:\n", 1)[1].splitlines():
        item = re.match(r"^(?:  |      )- (\w[\w.\-]*[^#]*?)\s*(?:#.*)?$", line)  # conda's, then pip's
        if item:
            name, spec = split(item.group(1))
            if name not in CONDA_ONLY:
                found[CONDA_NAMES.get(name, name)] = spec
    return found


def test_same_packages_and_ranges():
    assert conda_requirements() == pip_requirements() | CONDA_STRICTER


def test_pip_installs_on_a_cpu_get_a_triton_whose_interpreter_works_with_any_numpy():
    assert 'pip "triton>=3.7,<4"' in (ROOT / "course.sh").read_text()


def test_environment_installs_the_project_itself():
    assert "- -e ." in (ROOT / "environment.yml").read_text()


def test_python_floor_matches():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11"
    assert "python>=3.11" in (ROOT / "environment.yml").read_text()
