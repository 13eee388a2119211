"""A semester: due dates, extensions and late penalties (`semester.toml`), the course version it released
(`semester.lock.json`) and the provenance every grade row records.

`semester.toml` lives in the course folder (`course.layout`; or where `FLASH_COURSE_SEMESTER` points). Its format:

```toml
timezone = "Asia/Shanghai"   # zone of times written without an offset: an IANA name (daylight saving kept
                             # right), "+08:00" or "UTC" (the default)

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

[feedback]                   # the feedback service (course/grading/feedback_service.py)
per_day = 5                  # feedback gradings per student and unit per day, in the semester's zone (default 5)
```

Every setting is checked before anything is graded (and by `python -m course check`): a mistake is a
`SettingError` naming the file, the line and the fix. Penalties are fractions within [0, 1].

A submission's time is nbgrader's `timestamp.txt` (written by `nbgrader submit`, kept by `collect`) or, for zip
uploads, a row of the timestamps CSV (`student_id,unit,timestamp`, ISO 8601; the unit by number or full name)
given to `course grade --timestamps`; a time without an offset is in the semester's zone. `grades.csv` keeps each
submission's time, and `course export` computes the late columns again from `semester.toml` as it is then: an
extension granted after grading needs no regrade.
A `timestamp.txt` inside an upload is the student's own file and never read: intake leaves it out and writes the
CSV's time in its place (course/grading/intake.py); only `submitted/` graded in place keeps the one `collect` wrote.
"""

from __future__ import annotations

import csv
import datetime as dt
import difflib
import hashlib
import importlib.metadata
import json
import math
import os
import re
import subprocess
import tomllib
import zoneinfo
from dataclasses import dataclass, field
from pathlib import Path

from course import ROOT
from course.grading.atomic import replace_csv
from course.layout import Course
from course.neutral import cell
from utils.messages import bilingual

SEMESTER_FILE = "semester.toml"
ROSTER_FILE = "roster.csv"  # the course's one list of students
ROSTER_COLUMNS = ["student_id", "name", "email", "sis_login_id", "canvas_id", "section", "idnumber"]
LOCK_FILE = "semester.lock.json"
DAY = dt.timedelta(days=1)


def semester_path(course: Course) -> Path:
    return Path(os.environ.get("FLASH_COURSE_SEMESTER") or course.root / SEMESTER_FILE)


class SettingError(ValueError):
    """A setting (semester.toml, the timestamps CSV, the roster) that cannot be right."""


def setting_error(
    path: Path, line: int | None, problem: tuple[str, str] | str, fix: tuple[str, str]
) -> SettingError:
    """A SettingError naming the file, the line (when known), the problem ((zh, en), or a message already in
    both languages) and its fix."""
    where = f"{path} " + bilingual(f"第 {line} 行", f"line {line}") if line else str(path)
    said = problem if isinstance(problem, str) else bilingual(*problem)
    return SettingError(f"{where}: {said} — " + bilingual(f"改法：{fix[0]}", f"fix: {fix[1]}"))


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


OFFSET = re.compile(r"([+-])(\d{2}):(\d{2})")
TIME_EXAMPLE = "2026-03-06T23:59:00"
ZONE_FIX = (
    'IANA 时区名，如 "Europe/Berlin"、"Asia/Shanghai"，或固定偏移如 "+08:00"',
    'an IANA name such as "Europe/Berlin" or "Asia/Shanghai", or a fixed offset such as "+08:00"',
)


def parse_zone(text: str) -> dt.tzinfo:
    """ "UTC" (or nothing), a fixed offset "+08:00", or an IANA name ("Europe/Berlin": daylight saving kept)."""
    if not text or text.upper() == "UTC":
        return dt.UTC
    if offset := OFFSET.fullmatch(text):
        sign = -1 if offset[1] == "-" else 1
        return dt.timezone(sign * dt.timedelta(hours=int(offset[2]), minutes=int(offset[3])))
    try:
        return zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(bilingual(f"未知时区 {text!r}", f"unknown time zone {text!r}")) from None


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
    zone: dt.tzinfo = dt.UTC  # of times written without an offset
    feedback_per_day: int = 5  # the feedback service's gradings per student and unit per day

    def due_for(self, student: str, unit: str) -> dt.datetime | None:
        return self.extensions.get((student, unit), self.due.get(unit))

    def late(self, student: str, unit: str, submitted: dt.datetime | None) -> Late:
        due = self.due_for(student, unit)
        if due is None or submitted is None or submitted <= due + self.grace:
            return Late()
        late_by = submitted - due
        days = math.ceil(late_by / DAY)
        return Late(late_by, min(self.max_penalty, self.penalty_per_day * days))


KNOWN_KEYS = {
    "": ("timezone", "late", "due", "extensions", "feedback"),
    "late": ("penalty_per_day", "max_penalty", "grace_minutes"),
    "feedback": ("per_day",),
}
FORMAT_FIX = (
    "格式见 course/grading/semester.py 开头",
    "see the format at the top of course/grading/semester.py",
)


def line_of(text: str, table: str, key: str | None = None) -> int | None:
    """The line of `key` in the TOML table `table` ("" for the top level), else of the table's header."""
    current, found = "", None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.split("#", 1)[0].strip()
        if stripped.startswith("["):
            current = ".".join(part.strip().strip("\"'") for part in stripped.strip("[]").split("."))
            found = number if current == table and found is None else found
        elif current == table and key is not None and "=" in stripped:
            if stripped.split("=", 1)[0].strip().strip("\"'") == key:
                return number
    return found


class SemesterFile:
    """semester.toml read for checking: each error names its line."""

    def __init__(self, path: Path, course: Course, roster: dict[str, dict[str, str]] | None = None):
        self.path, self.course, self.roster = path, course, roster
        self.text = path.read_text(encoding="utf-8")
        try:
            self.data = tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as error:
            raise setting_error(
                path, None, (f"不是有效的 TOML：{error}", f"not valid TOML: {error}"), FORMAT_FIX
            ) from None

    def error(
        self, table: str, key: str | None, problem: tuple[str, str] | str, fix: tuple[str, str]
    ) -> SettingError:
        line = line_of(self.text, table, key)
        if line is None and key is not None:  # a whole table: its header
            line = line_of(self.text, f"{table}.{key}" if table else key)
        return setting_error(self.path, line, problem, fix)

    def table(self, name: str) -> dict:
        value = self.data.get(name, {})
        if not isinstance(value, dict):
            raise self.error(
                "",
                name,
                (f"{name} 不是表", f"{name} is not a table"),
                (f"写成 [{name}]", f"write it as [{name}]"),
            )
        return value

    def known_keys(self, table: str, data: dict) -> None:
        for key in data:
            if key not in KNOWN_KEYS[table]:
                known = ", ".join(KNOWN_KEYS[table])
                raise self.error(
                    table,
                    key,
                    (f"未知的设置 {key!r}", f"unknown setting {key!r}"),
                    (f"可用的有：{known}", f"the settings are: {known}"),
                )

    def zone(self) -> dt.tzinfo:
        text = self.data.get("timezone", "")
        try:
            if not isinstance(text, str):
                raise ValueError(
                    bilingual(f"时区不是字符串：{text!r}", f"the time zone is not a string: {text!r}")
                )
            return parse_zone(text)
        except ValueError as error:
            raise self.error("", "timezone", str(error), ZONE_FIX) from None

    def fraction(self, key: str, default: float) -> float:
        value = self.table("late").get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise self.error(
                "late",
                key,
                (
                    f"{key} = {value!r} 不是 0 到 1 之间的比例",
                    f"{key} = {value!r} is not a fraction within [0, 1]",
                ),
                ("写比例，如 0.10 表示 10%", "write a fraction, e.g. 0.10 for 10 %"),
            )
        return float(value)

    def grace(self) -> dt.timedelta:
        value = self.table("late").get("grace_minutes", 0)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise self.error(
                "late",
                "grace_minutes",
                (
                    f"grace_minutes = {value!r} 不是非负的分钟数",
                    f"grace_minutes = {value!r} is not a number of minutes >= 0",
                ),
                ("写分钟数，如 10", "write minutes, e.g. 10"),
            )
        return dt.timedelta(minutes=value)

    def feedback_per_day(self) -> int:
        value = self.table("feedback").get("per_day", Policy.feedback_per_day)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.error(
                "feedback",
                "per_day",
                (
                    f"per_day = {value!r} 不是至少为 1 的整数",
                    f"per_day = {value!r} is not a whole number of at least 1",
                ),
                ("写每天的次数，如 5", "write gradings a day, e.g. 5"),
            )
        return value

    def unit(self, table: str, name: str) -> str:
        try:
            (unit,) = self.course.select([name])
        except ValueError as error:
            raise self.error(
                table,
                name,
                str(error),
                (
                    "单元写编号或全名，如 06 或 06_flash_attention_pytorch",
                    "name a unit by number or full name, e.g. 06 or 06_flash_attention_pytorch",
                ),
            ) from None
        return unit

    def student(self, student: str) -> None:
        """A student id of the file (`[extensions.ID]`) is one of the roster's (when the course has a roster)."""
        if self.roster is None or student in self.roster:
            return
        near = difflib.get_close_matches(student, list(self.roster), n=1)
        guess = (f"（最接近的是 {near[0]}）", f" (the nearest is {near[0]})") if near else ("", "")
        raise self.error(
            "extensions",
            student,
            (
                f"学生 {student!r} 不在名单 {ROSTER_FILE} 中{guess[0]}：这项延期不会用上",
                f"the student {student!r} is not in {ROSTER_FILE}{guess[1]}: this extension would never apply",
            ),
            ("写名单中的 student_id", "write the roster's student_id"),
        )

    def time(self, table: str, name: str, value, zone: dt.tzinfo) -> dt.datetime:
        try:
            return parse_time(value, zone)
        except (ValueError, OverflowError, TypeError) as error:
            raise self.error(
                table,
                name,
                (f"{name} 的时间无法读取：{error}", f"the time of {name} cannot be read: {error}"),
                (f"写 TOML 日期时间，如 {TIME_EXAMPLE}", f"write a TOML date-time, e.g. {TIME_EXAMPLE}"),
            ) from None

    def due(self, zone: dt.tzinfo) -> dict[str, dt.datetime]:
        due: dict[str, dt.datetime] = {}
        for name, when in self.table("due").items():
            unit = self.unit("due", name)
            if unit in due:
                raise self.error(
                    "due",
                    name,
                    (f"{unit} 的截止时间写了两次", f"{unit} has two due dates"),
                    (f"只保留一行 {name}", f"keep one line for {name}"),
                )
            due[unit] = self.time("due", name, when, zone)
        return due

    def extensions(self, due: dict[str, dt.datetime], zone: dt.tzinfo) -> dict[tuple[str, str], dt.datetime]:
        extensions = {}
        for student, units in self.table("extensions").items():
            table = f"extensions.{student}"
            self.student(student)
            if not isinstance(units, dict):
                raise self.error(
                    "extensions",
                    student,
                    (f"{table} 不是表", f"{table} is not a table"),
                    (f"写成 [{table}]", f"write it as [{table}]"),
                )
            for name, value in units.items():
                unit = self.unit(table, name)
                if (student, unit) in extensions:
                    raise self.error(
                        table,
                        name,
                        (
                            f"{student} 的 {unit} 延期写了两次",
                            f"{student}'s extension of {unit} is given twice",
                        ),
                        (f"只保留一行 {name}", f"keep one line for {name}"),
                    )
                if isinstance(value, bool) or not isinstance(value, int | float):
                    extensions[student, unit] = self.time(table, name, value, zone)
                elif unit not in due:
                    raise self.error(
                        table,
                        name,
                        (
                            f"{student} 的 {unit} 延期按天数给出，但该单元没有截止时间",
                            f"{student}'s extension of {unit} is in days, but {unit} has no due date",
                        ),
                        (
                            f"在 [due] 中给 {unit} 截止时间，或写新的截止时间",
                            f"give {unit} a due date in [due], or write the new due date",
                        ),
                    )
                elif value < 0:
                    raise self.error(
                        table,
                        name,
                        (f"延期天数为负：{value}", f"an extension of a negative number of days: {value}"),
                        ("写非负的天数", "write a number of days >= 0"),
                    )
                else:
                    extensions[student, unit] = due[unit] + value * DAY
        return extensions

    def policy(self) -> Policy:
        self.known_keys("", self.data)
        self.known_keys("late", self.table("late"))
        self.known_keys("feedback", self.table("feedback"))
        zone = self.zone()
        due = self.due(zone)
        return Policy(
            due,
            self.extensions(due, zone),
            self.fraction("penalty_per_day", 0.0),
            self.fraction("max_penalty", 1.0),
            self.grace(),
            zone,
            self.feedback_per_day(),
        )


def course_roster(course: Course) -> dict[str, dict[str, str]] | None:
    """The course folder's roster.csv, every line checked; None while the course has none."""
    path = course.root / ROSTER_FILE
    return read_roster(path) if path.is_file() else None


def read_roster(path: Path) -> dict[str, dict[str, str]]:
    """{course student id: roster row}, every line checked."""
    header_fix = (
        f"第一行写 {','.join(ROSTER_COLUMNS)} 中用到的列（student_id 必须有）",
        f"make the first line the columns you use of {','.join(ROSTER_COLUMNS)} (student_id first of all)",
    )
    if not path.is_file():
        raise setting_error(
            path, None, ("文件不存在", "no such file"), ("检查名单路径", "check the roster's path")
        )
    roster: dict[str, dict[str, str]] = {}
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        unknown = [column for column in header if column not in ROSTER_COLUMNS]
        if "student_id" not in header or unknown:
            problem = (
                f"表头 {','.join(header)!r}：" + (f"未知的列 {unknown}" if unknown else "缺少 student_id"),
                f"the header {','.join(header)!r}: "
                + (f"unknown columns {unknown}" if unknown else "no student_id"),
            )
            raise setting_error(path, 1, problem, header_fix)
        for row in reader:
            student = (row["student_id"] or "").strip()
            if not student or student in roster:
                problem = (
                    f"student_id {student!r} 为空或重复",
                    f"student_id {student!r} is empty or given twice",
                )
                fix = ("每个学生一行，id 唯一", "one line per student, each id once")
                raise setting_error(path, reader.line_num, problem, fix)
            roster[student] = row
    return roster


def load_policy(path: Path, course: Course) -> Policy:
    """The semester's policy from its TOML file, every setting checked, each student id against the course's
    roster when it has a valid one (a broken roster is its own error, `read_roster`) (no file: no due dates)."""
    if not path.is_file():
        return Policy()
    try:
        roster = course_roster(course)
    except SettingError:
        roster = None
    return SemesterFile(path, course, roster).policy()


def missing_files(course: Course) -> list[str]:
    """A bilingual warning for each of the semester's own files the course folder lacks (a new or mistyped folder
    grades without them: no student checked, no LMS export, no due dates, no late penalty)."""
    missing = []
    if not (course.root / ROSTER_FILE).is_file():
        missing.append(
            bilingual(
                f"警告：课程文件夹 {course.root} 中没有名单 {ROSTER_FILE}：学生 id 不做检查，也不能导出到 LMS",
                f"warning: the course folder {course.root} has no roster {ROSTER_FILE}: no student id is checked "
                "and no LMS export is possible",
            )
        )
    if not semester_path(course).is_file():
        missing.append(
            bilingual(
                f"警告：没有学期文件 {semester_path(course)}：没有截止时间，也没有迟交扣分",
                f"warning: no semester file {semester_path(course)}: no due dates and no late penalty",
            )
        )
    return missing


TIMESTAMP_COLUMNS = ["student_id", "unit", "timestamp"]


def read_timestamps(
    path: Path | None, course: Course, zone: dt.tzinfo = dt.UTC
) -> dict[tuple[str, str], dt.datetime]:
    """{(student, unit): time} from a timestamps CSV (`student_id,unit,timestamp`; a unit by number or full
    name; a time without an offset in `zone`), every line checked."""
    if path is None:
        return {}
    header_fix = ("第一行写 student_id,unit,timestamp", "make the first line student_id,unit,timestamp")
    if not path.is_file():
        raise setting_error(
            path,
            None,
            ("文件不存在", "no such file"),
            ("检查 --timestamps 的路径", "check the path given to --timestamps"),
        )
    times: dict[tuple[str, str], dt.datetime] = {}
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        if missing := [column for column in TIMESTAMP_COLUMNS if column not in header]:
            problem = (
                f"表头 {','.join(header)!r} 缺少 {missing}",
                f"the header {','.join(header)!r} lacks {missing}",
            )
            raise setting_error(path, 1, problem, header_fix)
        fix = (
            f"写 student_id,单元（编号或全名）,时间（如 {TIME_EXAMPLE}）",
            f"write student_id,unit (number or full name),time (e.g. {TIME_EXAMPLE})",
        )
        for r in reader:
            student = (r["student_id"] or "").strip()
            try:
                if not student:
                    raise ValueError(bilingual("没有 student_id", "no student_id"))
                (unit,) = course.select([(r["unit"] or "").strip()])
                if (student, unit) in times:
                    raise ValueError(
                        bilingual(f"{student} 的 {unit} 出现两次", f"{student}'s {unit} appears twice")
                    )
            except ValueError as error:
                raise setting_error(path, reader.line_num, str(error), fix) from None
            try:
                times[student, unit] = parse_time(r["timestamp"] or "", zone)
            except (ValueError, OverflowError) as error:
                problem = (f"时间无法读取：{error}", f"the time cannot be read: {error}")
                raise setting_error(path, reader.line_num, problem, fix) from None
    return times


def submission_time(
    course: Course,
    student: str,
    unit: str,
    uploads: dict[tuple[str, str], dt.datetime],
    zone: dt.tzinfo = dt.UTC,
) -> dt.datetime | None:
    """When the submission was handed in: the timestamps CSV, else nbgrader's timestamp.txt (without an offset:
    in `zone`), else unknown."""
    if (student, unit) in uploads:
        return uploads[student, unit]
    stamp = course.submitted / student / unit / "timestamp.txt"
    return parse_time(stamp.read_text(encoding="utf-8"), zone) if stamp.is_file() else None


def late_columns(
    policy: Policy, student: str, unit: str, when: dt.datetime | None, score: float
) -> dict[str, str]:
    """The late-work columns of one grades.csv line: its submission time and what it costs under `policy`."""
    late = policy.late(student, unit, when)
    penalty, final = late_penalty(score, late.fraction)
    return {
        "submitted_at": when.isoformat(timespec="seconds") if when else "",
        "late": "yes" if late.is_late else "",
        "late_by": late.late_by_text(),
        "penalty_rate": f"{late.fraction:g}",
        "penalty": f"{penalty:g}",
        "final_score": f"{final:g}",
    }


def late_penalty(score: float, fraction: float) -> tuple[float, float]:
    """(what a late submission loses, what it keeps) of `score` at `fraction` off (grades.csv and the feedback)."""
    penalty = score * fraction
    return penalty, score - penalty


def refresh_late_columns(course: Course) -> None:
    """Compute grades.csv's late columns again from each line's stored submission time and semester.toml as it
    is now (an extension granted after grading needs no regrade)."""
    path = course.root / "grades.csv"
    if not path.is_file():
        return
    policy = load_policy(semester_path(course), course)
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        columns, lines = list(reader.fieldnames or []), list(reader)
    if not {"score", "submitted_at", "final_score"} <= set(columns):
        return  # not a grades.csv written by `course grade`
    for line in lines:
        when = dt.datetime.fromisoformat(line["submitted_at"]) if line["submitted_at"] else None
        line.update(late_columns(policy, line["student_id"], line["unit"], when, float(line["score"])))
    replace_csv(path, columns, lines)


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
    version = course_version(course.checkout if (course.checkout / ".git").exists() else ROOT)
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


def regrade_outcome(before: str, after: str, judged: tuple[str, str] | None = None) -> str:
    """What a regrade changed: the final score `before` -> `after` and, given `judged` (what the judge gave before
    and after), whether the judge changed it or hand grades (or the late work) did."""
    scores = f"{before or '-'} -> {after or '-'}"
    if judged is None:
        return "unchanged" if before == after else f"changed {scores}"
    if judged[0] != judged[1]:
        return f"judge changed {judged[0] or '-'} -> {judged[1] or '-'}; final score {scores}"
    if before == after:
        return "unchanged"
    return f"judge unchanged ({judged[0] or '-'}); final score {scores} by hand grades or late work"


def record_regrade(
    course: Course,
    student: str,
    unit: str,
    reason: str,
    before: str,
    after: str,
    outcome: str = "",
    judged: tuple[str, str] | None = None,
) -> dict[str, str]:
    """Append a regrade request with its outcome (by default `regrade_outcome`) to regrades.csv; the entry
    written."""
    outcome = outcome or regrade_outcome(before, after, judged)
    entry = dict(
        zip(
            REGRADE_COLUMNS,
            [
                dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                student,
                unit,
                cell(reason),  # the student's words, as the instructor typed them in
                before,
                after,
                cell(outcome),
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
