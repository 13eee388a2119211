"""Replacement cells for the selftest (format in course/AUTHORING.md): wrong implementations
(`course/wrong/<unit>/`, must lose points), legitimate variants (`course/variants/<unit>/`, must keep full marks)
and red-team attacks (`course/redteam/<unit>/`, may earn no more than their caps)."""

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
    caps: dict[str, float] | None = None  # red team: the most each test cell may earn
    flagged: bool | None = None  # red team: whether the judge must flag the submission
    delete: tuple[str, ...] = ()  # red team: test cells removed from the submitted notebook
    selfcheck_fails: tuple[str, ...] = ()  # test cells whose visible self-check must fail in the notebook
    residual: str = (
        ""  # red team: why it beats the in-child signals (residual risk: must be flagged, caps not enforced)
    )
    attack_class: str = ""  # red team: the kind of attack (CI's quick selftest runs one attack of each kind)
    retag: tuple[str, ...] = ()  # red team: test cells turned into ungraded cells that only print "ok"

    @property
    def name(self) -> str:
        return self.path.stem


REQUIRED = {
    "wrong": ("notebook", "replaces", "must-fail"),
    "variant": ("notebook", "replaces"),
    "redteam": ("notebook", "replaces", "caps", "class"),
}


def _names(value: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in value.split(",") if name.strip())


def parse(path: Path, kind: str = "wrong") -> WrongImpl:
    """Read one replacement-cell file; a clear error names the file and the missing header."""
    fields, body = {}, []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(HEADER) and ":" in line and not body:
            key, value = line[len(HEADER) :].split(":", 1)
            fields[key.strip()] = value.strip()
        elif body or not line.startswith("#"):
            body.append(line)
    missing = [key for key in REQUIRED[kind] if not fields.get(key)]
    if missing:
        raise ValueError(
            bilingual(
                f"{path}：缺少头部 {', '.join(HEADER + m for m in missing)}",
                f"{path}: missing header line(s) {', '.join(HEADER + m for m in missing)}",
            )
        )
    caps = None
    if "caps" in fields:
        caps = {
            gid.strip(): float(value) for gid, _, value in (c.partition("=") for c in _names(fields["caps"]))
        }
    flagged = {"yes": True, "no": False}.get(fields.get("flagged", "").lower())
    return WrongImpl(
        path,
        fields["notebook"],
        fields["replaces"],
        _names(fields.get("must-fail", "")),
        "\n".join(body).strip("\n"),
        caps,
        flagged,
        _names(fields.get("delete", "")),
        _names(fields.get("selfcheck-fails", "")),
        fields.get("residual", ""),
        fields.get("class", ""),
        _names(fields.get("retag", "")),
    )


def load(folder: Path, kind: str = "wrong") -> list[WrongImpl]:
    """Every replacement cell of `kind` in `folder`, sorted by file name (none when it does not exist)."""
    return [parse(path, kind) for path in sorted(folder.glob("*.py"))]
