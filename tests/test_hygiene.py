"""Repository hygiene: notebooks carry no outputs, markdown cells are bilingual, nbgrader outputs stay out of git."""

import json
import re
import subprocess
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
