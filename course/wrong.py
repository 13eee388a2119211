"""Wrong implementations for the selftest: `course/wrong/<unit>/<name>.py` (format in course/AUTHORING.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from utils.messages import bilingual

HEADER = "# selftest-"


@dataclass(frozen=True)
class WrongImpl:
    """One realistic mistake: the full source of one solution cell and the tests that must catch it."""

    path: Path
    notebook: str
    replaces: str
    must_fail: tuple[str, ...]
    body: str

    @property
    def name(self) -> str:
        return self.path.stem


def parse(path: Path) -> WrongImpl:
    """Read one wrong-implementation file; a clear error names the file and the missing header."""
    fields, body = {}, []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(HEADER) and ":" in line and not body:
            key, value = line[len(HEADER) :].split(":", 1)
            fields[key.strip()] = value.strip()
        elif body or not line.startswith("#"):
            body.append(line)
    missing = [key for key in ("notebook", "replaces", "must-fail") if not fields.get(key)]
    if missing:
        raise ValueError(
            bilingual(
                f"{path}：缺少头部 {', '.join(HEADER + m for m in missing)}",
                f"{path}: missing header line(s) {', '.join(HEADER + m for m in missing)}",
            )
        )
    must_fail = tuple(name.strip() for name in fields["must-fail"].split(",") if name.strip())
    return WrongImpl(path, fields["notebook"], fields["replaces"], must_fail, "\n".join(body).strip("\n"))


def load(folder: Path) -> list[WrongImpl]:
    """Every wrong implementation in `folder`, sorted by file name (none when it does not exist)."""
    return [parse(path) for path in sorted(folder.glob("*.py"))]
