"""Replacement cells for the selftest (format in course/AUTHORING.md): wrong implementations
(`course/wrong/<unit>/`, must lose points), legitimate variants (`course/variants/<unit>/`, must keep full marks)
and red-team attacks (`course/redteam/<unit>/`, may earn no more than their caps).

An entry is either a patch, a unified diff against today's reference answer of the cell it replaces (built at
load time, so a change to the reference reaches every entry), or against the cell of the unit's wrong
implementation its header names (`selftest-on`: an attack that rides on a known mistake), or a whole cell
whose header says why."""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from course import notebooks
from utils.messages import bilingual

HEADER = "# selftest-"
HUNK = "@@"


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
    explanation: str = ""  # the header's other comment lines ("Mistake: …", "错误：…"), without their "# "
    whole: str = ""  # why the file is a whole cell rather than a patch (`selftest-whole`)
    patched: bool = False  # built from a patch (on today's reference, or on a `selftest-on` mistake)

    @property
    def name(self) -> str:
        return self.path.stem


REQUIRED = {
    "wrong": ("replaces", "must-fail"),
    "variant": ("replaces",),
    "redteam": ("replaces", "caps", "class"),
}


def _names(value: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in value.split(",") if name.strip())


def parse(path: Path, kind: str = "wrong") -> WrongImpl:
    """Read one replacement-cell file (a patch is applied to today's reference); a clear error names the file
    and the missing header, or the hunk that no longer applies."""
    fields, explanation, body = {}, [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if body or not line.startswith("#"):
            body.append(line)
        elif line.startswith(HEADER) and ":" in line:
            key, value = line[len(HEADER) :].split(":", 1)
            fields[key.strip()] = value.strip()
        else:
            explanation.append(line[1:].strip())
    missing = [key for key in REQUIRED[kind] if not fields.get(key)]
    if missing:
        raise ValueError(
            bilingual(
                f"{path}：缺少头部 {', '.join(HEADER + m for m in missing)}",
                f"{path}: missing header line(s) {', '.join(HEADER + m for m in missing)}",
            )
        )
    notebook = fields.get("notebook") or notebook_of(path, fields["replaces"])
    source = "\n".join(body).strip("\n")
    patched = source.startswith(HUNK) or "on" in fields
    if "on" in fields:
        source = apply_patch(mistake(path, fields["on"], notebook, fields["replaces"]).body, source, path)
    elif patched:
        source = apply_patch(reference(path, notebook, fields["replaces"]), source, path)
    caps = None
    if "caps" in fields:
        caps = {
            gid.strip(): float(value) for gid, _, value in (c.partition("=") for c in _names(fields["caps"]))
        }
    flagged = {"yes": True, "no": False}.get(fields.get("flagged", "").lower())
    return WrongImpl(
        path,
        notebook,
        fields["replaces"],
        _names(fields.get("must-fail", "")),
        source,
        caps,
        flagged,
        _names(fields.get("delete", "")),
        _names(fields.get("selfcheck-fails", "")),
        fields.get("residual", ""),
        fields.get("class", ""),
        _names(fields.get("retag", "")),
        "\n".join(explanation),
        fields.get("whole", ""),
        patched,
    )


def load(folder: Path, kind: str = "wrong") -> list[WrongImpl]:
    """Every replacement cell of `kind` in `folder`, sorted by file name (none when it does not exist)."""
    return [parse(path, kind) for path in sorted(folder.glob("*.py"))]


def reference(path: Path, notebook: str, replaces: str) -> str:
    """Today's reference answer (without solution markers) of the cell an entry at `path` replaces: solution
    cell `replaces` of `source/<unit>/<notebook>` in the nearest folder above it, `<unit>` being its folder."""
    found = _unit_source(path, notebook) / notebook
    cells = _solution_cells(found)
    if replaces not in cells:
        raise ValueError(
            bilingual(
                f"{path}：{found} 中没有答案单元格 {replaces}",
                f"{path}: {found} has no solution cell {replaces}",
            )
        )
    return notebooks.without_markers(cells[replaces].source).strip("\n")


def mistake(path: Path, name: str, notebook: str, replaces: str) -> WrongImpl:
    """The wrong implementation `name` of the unit of the entry at `path` (`selftest-on`: the entry is that
    mistake plus its own patch), which must replace the same cell; a clear error otherwise."""
    found = path.parent.parent.parent / "wrong" / path.parent.name / f"{name}.py"
    if not found.is_file():
        raise ValueError(
            bilingual(
                f"{path}：{HEADER}on 指向的错误实现不存在：{found}",
                f"{path}: {HEADER}on names no wrong implementation: {found}",
            )
        )
    base = parse(found)
    if (base.notebook, base.replaces) != (notebook, replaces):
        raise ValueError(
            bilingual(
                f"{path}：{name} 替换的是 {base.notebook} 的 {base.replaces}，不是 {replaces}",
                f"{path}: {name} replaces {base.replaces} of {base.notebook}, not {replaces}",
            )
        )
    return base


def notebook_of(path: Path, replaces: str) -> str:
    """The notebook of the entry at `path` when its header names none: the one notebook of its unit (in
    `source/<unit>/` above it) that has solution cell `replaces`; a clear error when none or several have it."""
    folder = _unit_source(path, "*.ipynb")
    having = [nb.name for nb in sorted(folder.glob("*.ipynb")) if replaces in _solution_cells(nb)]
    if len(having) != 1:
        raise ValueError(
            bilingual(
                f"{path}：{folder} 中有 {len(having)} 个笔记本含答案单元格 {replaces}，请用 {HEADER}notebook 指明",
                f"{path}: {len(having)} notebooks in {folder} have solution cell {replaces}; name one with "
                f"{HEADER}notebook",
            )
        )
    return having[0]


def _unit_source(path: Path, notebook: str) -> Path:
    """`source/<unit>` in the nearest folder above the entry at `path` that holds `notebook` (a glob) there."""
    for folder in path.resolve().parents:
        found = folder / "source" / path.parent.name
        if any(found.glob(notebook)):
            return found
    raise ValueError(
        bilingual(
            f"{path}：上层文件夹中找不到 source/{path.parent.name}/{notebook}",
            f"{path}: no source/{path.parent.name}/{notebook} in a folder above it",
        )
    )


def _solution_cells(path: Path) -> dict:
    stat = path.stat()
    return notebooks.solution_cells(_read(path, stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=64)
def _read(path: Path, mtime_ns: int, size: int):
    """A notebook, read once while it is unchanged (every entry of a unit looks up the same one)."""
    return notebooks.read(path)


def hunks(patch: str, path: Path) -> list[tuple[int | None, list[str], list[str]]]:
    """(where the old lines start, 0-based, when the `@@ -N,M` says so; old lines; new lines) of each hunk of
    a unified diff. An empty line is an empty context line (an editor may have dropped its space)."""
    found: list[tuple[int | None, list[str], list[str]]] = []
    for line in patch.splitlines():
        if line.startswith(HUNK):
            start = re.match(r"@@ -(\d+)(?:,(\d+))?", line)
            hint = None if start is None else int(start[1]) - (start[2] != "0")
            found.append((hint, [], []))
        elif line[:1] in ("", " ", "-", "+") and found:
            _, old, new = found[-1]
            if line[:1] != "+":
                old.append(line[1:])
            if line[:1] != "-":
                new.append(line[1:])
        else:
            raise ValueError(
                bilingual(f"{path}：补丁中不是差异的行 {line!r}", f"{path}: not a diff line: {line!r}")
            )
    return found


def apply_patch(reference: str, patch: str, path: Path) -> str:
    """`reference` with each hunk of `patch` applied in order: a hunk's old lines (context and removed) must
    stand in the reference once after the previous hunk, or where its `@@ -N` says; otherwise it no longer
    applies, a clear error naming the file and the hunk."""
    lines, built, done = reference.splitlines(), [], 0
    for number, (hint, old, new) in enumerate(hunks(patch, path), 1):
        starts = _starts(lines, old, done)
        start = hint if hint in starts else starts[0] if len(starts) == 1 else None
        if start is None:
            zh, en = (
                (f"旧行在其中出现 {len(starts)} 次", f"its old lines stand in it {len(starts)} times")
                if starts
                else ("旧行不在其中", "its old lines are not in it")
            )
            raise ValueError(
                bilingual(
                    f"{path}：第 {number} 段补丁不再适用于今天的参考答案（{zh}）",
                    f"{path}: hunk {number} no longer applies to today's reference ({en})",
                )
            )
        built += lines[done:start] + new
        done = start + len(old)
    return "\n".join(built + lines[done:]).strip("\n")


def _starts(lines: list[str], old: list[str], done: int) -> list[int]:
    """Where `old` stands in `lines` from index `done` on."""
    return [i for i in range(done, len(lines) - len(old) + 1) if lines[i : i + len(old)] == old]


def patch(reference: str, cell: str, most: int = 3) -> str:
    """`cell` as a patch against `reference` in the corpus's format: a unified diff whose hunks carry the least
    context (at most `most` lines a side) that places their old lines once after the previous hunk, so most
    hunks are find/replace pairs; `apply_patch(reference, patch(reference, cell), …)` gives `cell` back."""
    old, new = reference.splitlines(), cell.splitlines()
    ops = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    changes = [op for op in ops if op[0] != "equal"]
    spans, done, last = [], 0, 0
    while last < len(changes):
        first = last
        while True:  # widen the hunk over the next change while its context would reach into it
            a1, a2 = changes[first][1], changes[last][2]
            before, after = _context(old, a1, a2, done, most)
            if last + 1 < len(changes) and a2 + after > changes[last + 1][1]:
                last += 1
                continue
            break
        b1, b2 = changes[first][3] - before, changes[last][4] + after
        spans.append((a1 - before, a2 + after, b1, b2))
        done, last = a2 + after, last + 1
    lines = []
    for i1, i2, j1, j2 in spans:
        lines.append(f"@@ -{_span(i1, i2)} +{_span(j1, j2)} @@")
        for tag, x1, x2, y1, y2 in ops:
            if tag == "equal":
                lines += [f" {line}" if line else "" for line in old[max(x1, i1) : min(x2, i2)]]
            elif i1 <= x1 and x2 <= i2 and j1 <= y1 and y2 <= j2:
                lines += [f"-{line}" for line in old[x1:x2]] + [f"+{line}" for line in new[y1:y2]]
    return "\n".join(lines)


def _context(lines: list[str], a1: int, a2: int, done: int, most: int) -> tuple[int, int]:
    """The fewest lines before and after `lines[a1:a2]` that make the hunk's old lines stand once from `done`
    on (else `most` a side, placed by the hunk's `@@ -N` alone)."""
    for total in range(2 * most + 1):
        for before in range(min(total, most), -1, -1):
            after = total - before
            old = lines[a1 - before : a2 + after]
            if after <= most and a1 - before >= done and a2 + after <= len(lines) and old:
                if _starts(lines, old, done) == [a1 - before]:
                    return before, after
    return min(most, a1 - done), min(most, len(lines) - a2)


def _span(start: int, stop: int) -> str:
    """A unified diff's line range: `N` for one line, `N,M` otherwise (N the line before an empty range)."""
    return str(start + 1) if stop - start == 1 else f"{start + (stop > start)},{stop - start}"
