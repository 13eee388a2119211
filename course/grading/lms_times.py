"""Submission times from the LMS's own records (`course import --times FILE`), never typed by hand.

- Canvas: the submissions JSON of its REST API (`GET /api/v1/courses/<course>/assignments/<assignment>/submissions`,
  saved to a file): a list of submissions, each with `user_id` and `submitted_at` (ISO 8601 in UTC; null when the
  student handed nothing in). Under anonymous grading it gives `anonymous_id` instead of `user_id` until the grades
  are posted: refused, saying so.
- Moodle: the assignment's grading worksheet ("Download grading worksheet", a CSV): `Identifier` ("Participant 3301")
  and `Last modified (submission)` ("Friday, 6 March 2026, 11:59 PM", or "-" for none), written in the time zone of
  the Moodle profile that downloaded it, without an offset: it is read in the semester's zone (`semester.toml`'s
  `timezone`, which must be that zone).

The worksheet also says who each Moodle participant is, by the identity fields it shows (`ID number`, `Email
address`: a student cannot change them alone, unlike the full name the download's folders carry): `course import`
matches Moodle students by them when it is given (`moodle_identities`).

Both name students by the LMS's id (Canvas's user id, Moodle's participant id), as the download's file names do:
`course import` maps them to the course's students with the download and writes the times to the class folder's
`timestamps.csv` (`student_id,unit,timestamp`, the file `course grade --timestamps` reads), one unit's lines
replaced, the others kept.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
from pathlib import Path

from course.grading import semester
from course.grading.atomic import replace_csv

MOODLE_ID, MOODLE_TIME = "Identifier", "Last modified (submission)"
MOODLE_NAME, MOODLE_GROUP = "Full name", "Group"
# Moodle's identity fields, which a student cannot change alone (unlike the full name): {column: the roster's}
MOODLE_IDENTITIES = {"ID number": "idnumber", "Email address": "email"}
TIMES_FILE = "timestamps.csv"
FIX = {
    "canvas": (
        "给出 Canvas REST API 的 submissions JSON（每个提交有 user_id 与 submitted_at）",
        "give Canvas's submissions JSON from its REST API (each submission with user_id and submitted_at)",
    ),
    "moodle": (
        f"给出 Moodle 作业的评分表 CSV（“下载评分工作表”，含 {MOODLE_ID} 与 {MOODLE_TIME} 列）",
        f"give the Moodle assignment's grading worksheet CSV ('Download grading worksheet', with the columns "
        f"{MOODLE_ID} and {MOODLE_TIME})",
    ),
}
ANONYMOUS = (
    "Canvas 的匿名评分在成绩发布之前隐藏用户 id（只有 anonymous_id），无法知道谁交了什么",
    "Canvas's anonymous grading hides user ids (anonymous_id alone) until the grades are posted: who handed in what "
    "cannot be known",
)
ANONYMOUS_FIX = (
    "在 Canvas 中发布这次作业的成绩（发布后显示姓名；没有录入成绩时学生看不到新内容）或关闭匿名评分，再取 submissions JSON；"
    "要让这里的评分人看不到姓名，用 course handgrade export --anonymous",
    "post the assignment's grades in Canvas (names show once posted; with no grade entered, students see nothing "
    "new) or turn anonymous grading off, then fetch the submissions JSON again; to keep graders here blind, use "
    "course handgrade export --anonymous",
)
IDENTITY_FIX = (
    "给出显示电子邮件地址或 ID 号的评分工作表（Moodle 的“显示用户身份”设置；匿名评分时，用能看到身份的账户下载——"
    "mod/assign:viewblinddetails 权限，如管理员——或在“显示学生身份”之后下载）：全名可由学生自己修改，不能用来认人",
    "give the grading worksheet with the email address or the ID number shown (Moodle's 'Show user identity' "
    "setting; under blind marking, downloaded by an account that may see identities, mod/assign:viewblinddetails, "
    "e.g. a manager's, or after 'Reveal student identities'): a student may edit their full name, so it cannot tell "
    "who they are",
)


def read_times(path: Path, layout: str, zone: dt.tzinfo) -> dict[str, dt.datetime]:
    """{LMS id (Canvas's user id, Moodle's participant id): submission time} of the LMS's records at `path`
    (`layout`: "canvas" or "moodle"; Moodle's times, which carry no offset, in `zone`), every entry checked."""
    if not path.is_file():
        raise semester.setting_error(path, None, ("文件不存在", "no such file"), FIX[layout])
    return canvas_times(path) if layout == "canvas" else moodle_times(path, zone)


def canvas_records(path: Path) -> list:
    """The submissions of Canvas's JSON, checked to be a list."""
    try:
        submissions = json.loads(path.read_text(encoding="utf-8-sig"))
    except (ValueError, UnicodeDecodeError) as error:
        problem = (f"不是 JSON：{error}", f"not JSON: {error}")
        raise semester.setting_error(path, None, problem, FIX["canvas"]) from None
    if not isinstance(submissions, list):
        problem = ("不是提交的列表", "not a list of submissions")
        raise semester.setting_error(path, None, problem, FIX["canvas"])
    return submissions


def canvas_times(path: Path) -> dict[str, dt.datetime]:
    times = {}
    for number, submission in enumerate(canvas_records(path), start=1):
        if (
            isinstance(submission, dict)
            and "anonymous_id" in submission
            and submission.get("user_id") is None
        ):
            raise semester.setting_error(path, None, ANONYMOUS, ANONYMOUS_FIX)
        try:
            user, when = str(submission["user_id"]), submission["submitted_at"]
            if when is not None:
                times[user] = semester.parse_time(when)
        except (TypeError, KeyError, ValueError, OverflowError) as error:
            problem = (
                f"第 {number} 个提交无法读取：{error!r}",
                f"submission number {number} cannot be read: {error!r}",
            )
            raise semester.setting_error(path, None, problem, FIX["canvas"]) from None
    return times


def moodle_times(path: Path, zone: dt.tzinfo) -> dict[str, dt.datetime]:
    times = {}
    for number, participant, line in moodle_sheet(path)[1]:
        when = (line[MOODLE_TIME] or "").strip()
        try:
            if when not in ("", "-"):
                times[participant] = semester.parse_time(when, zone)
        except (ValueError, OverflowError) as error:
            problem = (f"无法读取：{error}", f"cannot be read: {error}")
            raise semester.setting_error(path, number, problem, FIX["moodle"]) from None
    return times


def moodle_identities(path: Path) -> dict[str, dict[str, str]]:
    """{participant id: its identity (`moodle_identity`)} of Moodle's grading worksheet at `path`, which must show
    at least one of MOODLE_IDENTITIES."""
    header, lines = moodle_sheet(path)
    if not shows_identity(header):
        problem = (
            f"表头缺少 {' 或 '.join(MOODLE_IDENTITIES)}",
            f"the header lacks {' or '.join(MOODLE_IDENTITIES)}",
        )
        raise semester.setting_error(path, 1, problem, IDENTITY_FIX)
    return {participant: moodle_identity(line) for _, participant, line in lines}


def shows_identity(header: list[str]) -> bool:
    """Whether a worksheet's header holds an identity field (Moodle's "Show user identity" lists one)."""
    return bool(MOODLE_IDENTITIES.keys() & set(header))


def moodle_identity(line: dict[str, str]) -> dict[str, str]:
    """{roster column ("idnumber", "email"): value} of the identity fields a worksheet line gives."""
    return {
        column: value.strip()
        for key, column in MOODLE_IDENTITIES.items()
        if (value := line.get(key) or "").strip() not in ("", "-")
    }


def moodle_sheet(
    path: Path, columns: tuple[str, ...] = (MOODLE_ID, MOODLE_TIME), fix: tuple[str, str] = FIX["moodle"]
) -> tuple[list[str], list[tuple[int, str, dict[str, str]]]]:
    """Moodle's grading worksheet at `path`: its header, and (line number, participant id, line) of each line, the
    header (it must hold `columns`) and every participant checked; `fix`: how to mend it, said in an error."""
    if not path.is_file():
        raise semester.setting_error(path, None, ("文件不存在", "no such file"), fix)
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        if missing := [column for column in columns if column not in header]:
            raise semester.setting_error(path, 1, (f"表头缺少 {missing}", f"the header lacks {missing}"), fix)
        lines = []
        for line in reader:
            # A field beyond the header's has no column to read it by, nor to be written back under.
            if None in line:
                problem = ("字段比表头多", "it has more fields than the header")
                raise semester.setting_error(path, reader.line_num, problem, fix)
            who = participant(line)
            if not who.isdigit():
                problem = (
                    f"无法读取：{MOODLE_ID} {line[MOODLE_ID]!r}",
                    f"cannot be read: {MOODLE_ID} {line[MOODLE_ID]!r}",
                )
                raise semester.setting_error(path, reader.line_num, problem, fix)
            lines.append((reader.line_num, who, line))
    return header, lines


def participant(line: dict[str, str]) -> str:
    """A worksheet line's participant id ("Participant 3301": "3301")."""
    return (line[MOODLE_ID] or "").removeprefix("Participant").strip()


def read_groups(path: Path, layout: str) -> dict[str, tuple[str, str]]:
    """{LMS id: (its group, its name in the records)} of a group assignment's students: Canvas's submissions JSON
    fetched with `include[]=group` (a submission's `group`, its id null when none) or Moodle's worksheet of a group
    assignment (its `Group` column); empty for an individual assignment. Read after `read_times` checked the file."""
    if layout == "canvas":
        return {
            str(submission["user_id"]): (f"{group.get('name') or ''} ({group['id']})", "")
            for submission in canvas_records(path)
            if isinstance(group := submission.get("group"), dict) and group.get("id") is not None
        }
    return {
        who: (group, line.get(MOODLE_NAME) or "")
        for _, who, line in moodle_sheet(path)[1]
        if (group := (line.get(MOODLE_GROUP) or "").strip()) not in ("", "-")
    }


def write_times(into: Path, unit: str, found: dict[str, dt.datetime]) -> Path:
    """Put `found` ({student: time}) as `unit`'s lines of the class folder's timestamps CSV, keeping the other
    units' lines; the file."""
    path = into / TIMES_FILE
    kept = []
    if path.is_file():
        with path.open(newline="", encoding="utf-8") as f:
            kept = [line for line in csv.DictReader(f) if line["unit"] != unit]
    ours = [
        {"student_id": student, "unit": unit, "timestamp": when.isoformat(timespec="seconds")}
        for student, when in sorted(found.items())
    ]
    replace_csv(path, semester.TIMESTAMP_COLUMNS, kept + ours)
    return path
