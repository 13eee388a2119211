"""A semester: due dates, extensions and late penalties (`semester.toml`), the course version it released
(`semester.lock.json`) and the provenance every grade row records.

`semester.toml` lives in the course root (or where `FLASH_COURSE_SEMESTER` points). Its format:

```toml
timezone = "+08:00"          # offset of due dates written without one (default: UTC)

[late]
penalty_per_day = 0.10       # fraction of the unit's score lost per started day late (default 0)
max_penalty = 0.50           # never more than this fraction of the score (default 1)
grace_minutes = 10           # submissions this close after the due date are on time (default 0)

[due]                        # unit (full name or number) = due date
"01_memory_bottleneck" = 2026-03-06T23:59:00+08:00
"02" = 2026-03-13T23:59:00

[extensions.alice]           # one student: a unit's new due date, or a number of days added to it
"01" = 2026-03-09T23:59:00
"02" = 2
```

A submission's time is nbgrader's `timestamp.txt` (written by `nbgrader submit`, kept by `collect`) or, for zip
uploads, a row of the timestamps CSV (`student_id,unit,timestamp`, ISO 8601) given to `course grade --timestamps`.
A `timestamp.txt` inside an upload is the student's own file and never read: intake leaves it out and writes the
CSV's time in its place (course/intake.py); only `submitted/` graded in place keeps the one `collect` wrote.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import importlib.metadata
import json
import math
import os
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from course import ROOT
from course.layout import Course
from utils.messages import bilingual

SEMESTER_FILE = "semester.toml"
LOCK_FILE = "semester.lock.json"
DAY = dt.timedelta(days=1)


def semester_path(course: Course) -> Path:
    return Path(os.environ.get("FLASH_COURSE_SEMESTER") or course.root / SEMESTER_FILE)


def parse_time(value, zone: dt.tzinfo = dt.UTC) -> dt.datetime:
    """A TOML datetime or a timestamp string (ISO 8601 or nbgrader's "2026-03-06 15:04:05.123456 UTC") as an
    aware datetime; times without an offset are in `zone`."""
    if isinstance(value, str):
        from dateutil import parser

        value = parser.parse(value.strip())
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime.combine(value, dt.time(23, 59, 59))
    if not isinstance(value, dt.datetime):
        raise ValueError(bilingual(f"不是日期时间：{value!r}", f"not a date and time: {value!r}"))
    return value if value.tzinfo else value.replace(tzinfo=zone)


def parse_zone(text: str) -> dt.tzinfo:
    if not text or text.upper() == "UTC":
        return dt.UTC
    sign = -1 if text.startswith("-") else 1
    hours, minutes = text.lstrip("+-").split(":")
    return dt.timezone(sign * dt.timedelta(hours=int(hours), minutes=int(minutes)))


@dataclass(frozen=True)
class Late:
    """How late one submission was and what it costs."""

    late_by: dt.timedelta = dt.timedelta(0)
    fraction: float = 0.0  # of the score

    @property
    def is_late(self) -> bool:
        return self.late_by > dt.timedelta(0)

    def late_by_text(self) -> str:
        if not self.is_late:
            return ""
        minutes = math.ceil(self.late_by.total_seconds() / 60)
        days, rest = divmod(minutes, 24 * 60)
        return f"{days}d {rest // 60:02d}:{rest % 60:02d}"


@dataclass(frozen=True)
class Policy:
    """Due dates per unit, per-student extensions and the late penalty."""

    due: dict[str, dt.datetime] = field(default_factory=dict)
    extensions: dict[tuple[str, str], dt.datetime] = field(default_factory=dict)  # (student, unit) -> due
    penalty_per_day: float = 0.0
    max_penalty: float = 1.0
    grace: dt.timedelta = dt.timedelta(0)

    def due_for(self, student: str, unit: str) -> dt.datetime | None:
        return self.extensions.get((student, unit), self.due.get(unit))

    def late(self, student: str, unit: str, submitted: dt.datetime | None) -> Late:
        due = self.due_for(student, unit)
        if due is None or submitted is None or submitted <= due + self.grace:
            return Late()
        late_by = submitted - due
        days = math.ceil(late_by / DAY)
        return Late(late_by, min(self.max_penalty, self.penalty_per_day * days))


def load_policy(path: Path, course: Course) -> Policy:
    """The semester's policy from its TOML file (no file: no due dates)."""
    if not path.is_file():
        return Policy()
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    zone = parse_zone(str(data.get("timezone", "")))
    late = data.get("late", {})
    due = {
        unit: parse_time(when, zone)
        for name, when in data.get("due", {}).items()
        for unit in course.select([name])
    }
    extensions = {}
    for student, units in data.get("extensions", {}).items():
        for name, value in units.items():
            (unit,) = course.select([name])
            if isinstance(value, int | float) and not isinstance(value, bool):
                if unit not in due:
                    raise ValueError(
                        bilingual(
                            f"{student} 的 {unit} 延期按天数给出，但该单元没有截止时间",
                            f"{student}'s extension of {unit} is in days, but {unit} has no due date",
                        )
                    )
                extensions[student, unit] = due[unit] + value * DAY
            else:
                extensions[student, unit] = parse_time(value, zone)
    return Policy(
        due,
        extensions,
        float(late.get("penalty_per_day", 0.0)),
        float(late.get("max_penalty", 1.0)),
        dt.timedelta(minutes=float(late.get("grace_minutes", 0))),
    )


def read_timestamps(path: Path | None) -> dict[tuple[str, str], dt.datetime]:
    """{(student, unit): time} from a timestamps CSV (`student_id,unit,timestamp`)."""
    if path is None:
        return {}
    times = {}
    with path.open(newline="", encoding="utf-8") as f:
        for line, r in enumerate(csv.DictReader(f), start=2):
            try:
                times[r["student_id"], r["unit"]] = parse_time(r["timestamp"])
            except (KeyError, ValueError, OverflowError) as error:
                raise ValueError(
                    bilingual(
                        f"{path} 第 {line} 行不是 student_id,unit,timestamp：{error}",
                        f"{path} line {line} is not student_id,unit,timestamp: {error}",
                    )
                ) from None
    return times


def submission_time(
    course: Course, student: str, unit: str, uploads: dict[tuple[str, str], dt.datetime]
) -> dt.datetime | None:
    """When the submission was handed in: the timestamps CSV, else nbgrader's timestamp.txt, else unknown."""
    if (student, unit) in uploads:
        return uploads[student, unit]
    stamp = course.submitted / student / unit / "timestamp.txt"
    return parse_time(stamp.read_text(encoding="utf-8")) if stamp.is_file() else None


# ---- provenance ------------------------------------------------------------------------------------------


def course_version(root: Path = ROOT) -> str:
    """The git commit of the course (with "-dirty" when it has uncommitted changes), else the package version."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        changes = subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                "course",
                "utils",
                "source",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return commit + ("-dirty" if changes else "")
    except (OSError, subprocess.CalledProcessError):
        return "package " + package_version("flash-attention-course")


def package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "none"


def device_name() -> str:
    import torch

    import utils

    return torch.cuda.get_device_name(0) if utils.mode().is_gpu else "cpu"


def salt_id(salt: str) -> str:
    """Names a salt without revealing it (students seeing the id cannot recover the salt)."""
    return hashlib.sha256(f"flash-course-salt-id\0{salt}".encode()).hexdigest()[:10] if salt else "none"


def provenance(salt: str, version: str) -> dict[str, str]:
    """What every grade row records about how it was graded (the sandbox is per row); `version` is
    `course_version()`."""
    return {
        "course_version": version,
        "torch": package_version("torch"),
        "triton": package_version("triton"),
        "device": device_name(),
        "salt_id": salt_id(salt),
    }


# ---- the released version ----------------------------------------------------------------------------------


def pin_release(course: Course, units: list[str]) -> Path | None:
    """Record the course version a release came from (only in a course that has a semester file)."""
    if not semester_path(course).is_file():
        return None
    lock = semester_path(course).with_name(LOCK_FILE)
    record = json.loads(lock.read_text(encoding="utf-8")) if lock.is_file() else {"units": {}}
    version = course_version(course.root if (course.root / ".git").exists() else ROOT)
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    record["units"].update({unit: {"course_version": version, "released": now} for unit in units})
    lock.write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")
    return lock


def version_warnings(course: Course, units: list[str], current: str) -> list[str]:
    """Bilingual warnings for the units whose release came from another course version than `current`."""
    lock = semester_path(course).with_name(LOCK_FILE)
    if not lock.is_file():
        return []
    pinned = json.loads(lock.read_text(encoding="utf-8")).get("units", {})
    return [
        bilingual(
            f"警告：{unit} 发布时课程版本为 {pinned[unit]['course_version']}，现在为 {current}：评审程序可能已改变",
            f"warning: {unit} was released from course version {pinned[unit]['course_version']}, "
            f"grading runs {current}: the judge may have changed",
        )
        for unit in sorted(set(units))
        if unit in pinned and pinned[unit]["course_version"] != current
    ]


# ---- regrade requests -------------------------------------------------------------------------------------

REGRADE_LOG = "regrades.csv"
REGRADE_COLUMNS = ["requested_at", "student_id", "unit", "reason", "score_before", "score_after", "outcome"]


def final_score(course: Course, student: str, unit: str) -> str:
    """The pair's final score in grades.csv ("" when it has none)."""
    path = course.root / "grades.csv"
    if not path.is_file():
        return ""
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if (row["student_id"], row["unit"]) == (student, unit):
                return row.get("final_score") or row["score"]
    return ""


def record_regrade(
    course: Course, student: str, unit: str, reason: str, before: str, after: str, outcome: str = ""
) -> dict[str, str]:
    """Append a regrade request with its outcome to regrades.csv; the entry written."""
    if not outcome:
        outcome = "unchanged" if before == after else f"changed {before or '-'} -> {after or '-'}"
    entry = dict(
        zip(
            REGRADE_COLUMNS,
            [
                dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                student,
                unit,
                reason,
                before,
                after,
                outcome,
            ],
            strict=True,
        )
    )
    path = course.root / REGRADE_LOG
    new = not path.is_file()
    with path.open("a", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, REGRADE_COLUMNS)
        if new:
            writer.writeheader()
        writer.writerow(entry)
    return entry
