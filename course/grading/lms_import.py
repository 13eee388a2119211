"""`python -m course import LMS_ZIP --unit UNIT --into FOLDER`: an LMS's bulk download of one assignment placed as
`FOLDER/<student>/<unit>/<notebook>.ipynb`, the class folder `course grade` takes.

Canvas's "Download Submissions" names each file `<lastfirst>_<user id>_<submission id>_<file>` (`<lastfirst>_LATE_…`
for a late one, in any case); Moodle's "Download all submissions" names a folder
`<Full Name>_<participant id>_assignsubmission_file/` per student (`…_file_/` before Moodle 4.1; or, unfolded,
prefixes each file with `…_file_`). The roster (`roster.csv`, see course/grading/lms.py) says who is who: Canvas's
user id is its `canvas_id`; Moodle's participant id changes with every assignment, so a Moodle student is found
through the assignment's grading worksheet (`--times`), whose identity fields (`ID number`, `Email address`) are
matched with the roster's `idnumber` and `email`: the full name is the student's to edit, and one renamed as a
classmate would be placed as them. Without the worksheet, a Moodle student is found by the roster's
`name` as people read it (NFKC, case, spaces, zero-width characters):
a name read as two roster names, or read as one but written otherwise (a no-break space, the Kelvin sign: how a
classmate poses as another), is refused naming them. A file whose LMS added a `-1` to its name, or the one notebook
of a one-notebook unit under another name, takes the unit's notebook name; of several files taking one name (handed
in again: `-1`, `-2`), the last is placed and the others are listed in the report. Under Moodle's blind marking
(`Participant_<id>_…`) only a worksheet showing identities says who is who; without one, each is refused saying how
to get it.

A group assignment's download holds one submission per group (Canvas: under the name of the member who handed
it in; Moodle 4.1+: a folder `<group name>_<group id>_…`, `Default group_…` for those in none; before 4.1:
`<group>-<Full Name>_…`): with `--times`, the LMS's records name every member's group (Canvas's submissions JSON
fetched with `include[]=group`, as `course lms pull` fetches it; the `Group` column of Moodle's worksheet), and each
member without files of their own is given the group's, so each is graded and exported. A Moodle group folder the
worksheet does not name, or that reads as two of its groups, is refused.

The zip is read member by member through intake (course/grading/intake.py): its limits, refusals and atomic
placing hold here too, and the download itself is never changed. A student the roster does not know, a file in
neither layout, a refused submission: each is listed on screen and in `FOLDER/lms_import_<unit>.csv`, never dropped
silently. Canvas's late mark is kept there too; the download carries no submission times, so give late students'
times to `course grade --timestamps`.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from course.grading import intake, lms_times, semester
from course.layout import Course
from course.neutral import cell, visible
from utils.messages import bilingual

CANVAS = re.compile(r"(?P<name>[^_/]+?)(?P<late>(?i:_late))?_(?P<user>\d+)_\d+_(?P<file>[^/]+)")
# An LMS's number on a file handed in again under the same name (`softmax-2.ipynb`: the third).
RESUBMITTED = re.compile(r"-(\d+)(?=\.ipynb$)")
# Moodle's prefixes (mod/assign/classes/downloader.php, Moodle 4.1+; download_submissions in locallib.php before):
# `<Full Name>_<participant id>`, `Participant_<id>` under blind marking; a team's `<group name>_<group id>`, or
# `Default group` alone for those in none (4.1+), `<group>-<Full Name>_<id>` before. Then `_assignsubmission_file`
# and a folder (`/`, `_/` before 4.1) or, unfolded, `_` and the file's name.
MOODLE = re.compile(
    r"(?P<name>[^/]+?)(?:_(?P<user>\d+))?_assignsubmission_(?P<plugin>[a-z]+)(?:_/*|/+)(?P<file>.+)"
)
# Moodle's mark between a name and a file; twice in a member's first part, a student's name (which Moodle may let
# them edit) or file name holds it, and the member might parse as another participant's: it is left out.
MOODLE_MARK = re.compile(r"_\d+_assignsubmission_")
BLIND_NAME = "participant"  # Moodle's name of every participant under blind marking (`Participant_<id>_…`)
LAYOUTS = ("canvas", "moodle")
REPORT_COLUMNS = ["lms_user", "lms_name", "student_id", "unit", "files", "late", "submitted_at", "result"]


@dataclass
class Submitter:
    """One student's files in the download, as the LMS named them."""

    user: str  # Canvas's user id or Moodle's participant id
    name: str  # lastfirst (Canvas) or the full name (Moodle)
    late: bool = False
    members: list[tuple[str, zipfile.ZipInfo]] = field(default_factory=list)  # (original name, entry)
    student: str = ""  # the course's id, once the roster knows them
    result: str = ""  # "placed", or why not (bilingual)
    older: list[str] = field(default_factory=list)  # files left out for a later resubmission of the same name
    submitted: dt.datetime | None = None  # when, by the LMS's records (`--times`)
    group: str = ""  # a group assignment's group, by the LMS's records
    source: Submitter | None = None  # a group member without files of their own: the group's submitter
    folder: str = ""  # a member of a Moodle 4.1+ team: its group's folder in the download


def detect(names: list[str]) -> str:
    """Which LMS wrote the download: the layout most of its files follow."""
    moodle = sum(bool(MOODLE.fullmatch(n)) for n in names)
    canvas = sum(bool(CANVAS.fullmatch(n)) for n in names)
    if not moodle and not canvas:
        raise ValueError(
            bilingual(
                "zip 既不是 Canvas 的“下载提交”也不是 Moodle 的“下载所有提交”",
                "the zip is neither Canvas's 'Download Submissions' nor Moodle's 'Download all submissions'",
            )
        )
    return "moodle" if moodle >= canvas else "canvas"


def detected(archive: zipfile.ZipFile, layout: str) -> str:
    """`layout`, or the one the download follows where it is "auto"."""
    return (
        detect([info.filename for info in archive.infolist() if not info.is_dir()])
        if layout == "auto"
        else layout
    )


def submitters(archive: zipfile.ZipFile, layout: str) -> tuple[list[Submitter], list[str]]:
    """The download's students with their files, and the members in neither layout (left out)."""
    pattern = MOODLE if layout == "moodle" else CANVAS
    found: dict[str, Submitter] = {}
    stray = []
    for info in archive.infolist():
        if info.is_dir():
            continue
        match = pattern.fullmatch(info.filename)
        posing = layout == "moodle" and len(MOODLE_MARK.findall(info.filename.split("/")[0])) > 1
        if match is None or posing or match.groupdict().get("plugin", "file") != "file":
            stray.append(visible(info.filename))
            continue
        key = match["user"] or f"no id: {match['name']}"  # a Moodle 4.1+ team's `Default group`
        person = found.setdefault(key, Submitter(match["user"] or "", match["name"]))
        person.late = person.late or bool(match.groupdict().get("late"))
        person.members.append((match["file"], info))
    return list(found.values()), stray


def group_members(
    people: list[Submitter], groups: dict[str, tuple[str, str]], layout: str
) -> list[Submitter]:
    """The members of each submitter's group (`groups`: the LMS's records, `lms_times.read_groups`) who have no
    files of their own in the download, each given the group's files; Moodle's `<group>-` before a name dropped."""
    here = {person.user for person in people}
    members = []
    for person in people:
        person.group = groups.get(person.user, ("", ""))[0]
        if not person.group:
            continue
        if layout == "moodle":
            person.name = person.name.removeprefix(person.group.replace("_", " ") + "-")
        for user, (group, name) in sorted(groups.items()):
            if group == person.group and user not in here:
                here.add(user)
                members.append(
                    Submitter(user, name, person.late, list(person.members), group=group, source=person)
                )
    return members


def team_folders(
    people: list[Submitter], groups: dict[str, tuple[str, str]], participants: set[str]
) -> tuple[list[Submitter], list[Submitter]]:
    """`people` with each Moodle 4.1+ team folder (named by its group: `MOODLE`) replaced by the members its group
    has in the worksheet (`groups`, `lms_times.read_groups`), each given its files; and the folders refused: one
    reading as several of its groups, or as none where its number is none of the worksheet's `participants` (of a
    group assignment, or without an id at all). Any other is a student's folder, as before."""
    by_folder: dict[str, set[str]] = {}
    for group, _ in groups.values():
        by_folder.setdefault(folder_form(group), set()).add(group)
    kept, refused = [], []
    for person in people:
        found = sorted(by_folder.get(folder_form(person.name), ()))
        if len(found) == 1:
            kept += [
                Submitter(
                    user, name, person.late, list(person.members), group=group, folder=folder_of(person)
                )
                for user, (group, name) in sorted(groups.items())
                if group == found[0]
            ]
        elif found or not person.user or (groups and person.user not in participants):
            person.result = team_refusal(found, bool(groups))
            refused.append(person)
        else:
            kept.append(person)
    return kept, refused


def folder_form(name: str) -> str:
    """A group's name as Moodle writes it in a folder's name, read as people read it: `_` a space, clean_filename's
    characters dropped (lib/moodlelib.php, PARAM_FILE)."""
    return as_read("".join(c for c in name if c not in '/\\:*?"<>|'))


def folder_of(person: Submitter) -> str:
    return f"{person.name}_{person.user}" if person.user else person.name


def team_refusal(found: list[str], worksheet: bool) -> str:
    """Why a team folder is not placed: it reads as several groups (`found`), or as none of the worksheet's."""
    if len(found) > 1:
        return visible(
            bilingual(
                f"拒收，一份也不猜：小组文件夹读作评分表中的 {len(found)} 个小组：{', '.join(found)}",
                f"refused, none is guessed: the group folder reads as {len(found)} groups of the grading "
                f"worksheet: {', '.join(found)}",
            )
        )
    if worksheet:
        return bilingual(
            "未知小组：既不是评分表 Group 列中的小组，也不是评分表中的参与者",
            "unknown group: neither a group of the grading worksheet's Group column nor one of its participants",
        )
    return bilingual(
        "文件夹名中没有参与者 id（Moodle 4.1 起小组提交的文件夹按小组命名）：给出评分工作表（--times），其 Group 列写明小组成员",
        "no participant id in the folder's name (Moodle 4.1+ names a team submission's folder by its group): give "
        "the grading worksheet (--times), whose Group column names the group's members",
    )


def group_note(person: Submitter) -> list[str]:
    """Whose files a group member was given (none: no note)."""
    if person.folder:
        return [
            bilingual(
                f"小组 {person.group}，Moodle 的文件夹 {person.folder}",
                f"group {person.group}, Moodle's folder {person.folder}",
            )
        ]
    if person.source is None:
        return []
    by = f"{person.source.user} ({person.source.student})"
    return [bilingual(f"小组 {person.group}，由 {by} 提交", f"group {person.group}, handed in by {by}")]


def as_read(name: str) -> str:
    """A name as people read it, to find it in the roster: compatibility forms as the letters they show (NFKC: a
    no-break space a space, the Kelvin sign K, full-width letters plain ones), invisible characters (zero-width,
    bidi marks, controls) dropped, case folded, Moodle's `_` and every run of spaces one space."""
    shown = unicodedata.normalize("NFKC", name.replace("_", " "))
    return " ".join("".join(c for c in shown if not invisible(c)).split()).casefold()


def invisible(char: str) -> bool:
    return unicodedata.category(char) in ("Cf", "Cc")


def disguise(name: str) -> str:
    """The characters of `name` written otherwise than they read, named ("U+212A KELVIN SIGN"): compatibility
    forms and invisible ones. A name typed on a keyboard has none; one made to pose as a classmate's does."""
    odd = [c for c in dict.fromkeys(name) if invisible(c) or unicodedata.normalize("NFKC", c) != c]
    return ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, '')}".rstrip() for c in odd)


def identify(
    people: list[Submitter],
    roster: dict[str, dict[str, str]],
    layout: str,
    identities: dict[str, dict[str, str]] | None = None,
) -> None:
    """Fill in each submitter's course id from the roster (Canvas: canvas_id; Moodle: the identity fields of its
    grading worksheet, `identities`, else the name as read, `as_read`), or say why not: a Moodle name read as two
    roster names, or read as one but written otherwise, is refused naming them (`moodle_match`)."""
    if layout == "moodle" and identities is not None:
        for person in people:
            person.student, person.result = worksheet_match(identities.get(person.user), roster)
    elif layout == "canvas":
        by_id = {row.get("canvas_id", "").strip(): student for student, row in roster.items()}
        for person in people:
            person.student = by_id.get(person.user, "") if person.user else ""
            if not person.student:
                person.result = bilingual(
                    "未知学生：名单中没有这个 canvas_id", "unknown student: no roster line has this canvas_id"
                )
    else:
        by_name: dict[str, list[str]] = {}
        for student, row in roster.items():
            by_name.setdefault(as_read(row.get("name", "")), []).append(student)
        for person in people:
            person.student, person.result = moodle_match(
                person.name, by_name.get(as_read(person.name), []), roster
            )
    refuse_shared(people)


def moodle_match(name: str, candidates: list[str], roster: dict[str, dict[str, str]]) -> tuple[str, str]:
    """(the student, "") a Moodle name is, or ("", why not): the roster names it reads as, when not exactly one,
    or the one it reads as but is written otherwise (the roster may give the name as the LMS writes it)."""
    named = ", ".join(f"{student} ({written(roster[student])})" for student in candidates)
    if as_read(name) == BLIND_NAME:
        return "", bilingual(
            f"Moodle 的匿名评分隐藏了此参与者是谁：{lms_times.IDENTITY_FIX[0]}",
            f"Moodle's blind marking hides who this participant is: {lms_times.IDENTITY_FIX[1]}",
        )
    if not candidates:
        return "", bilingual("未知学生：名单中没有这个名字", "unknown student: no roster line has this name")
    if len(candidates) > 1:
        why = (
            f"名单中有 {len(candidates)} 名学生读作这个名字：{named}",
            f"it reads as {len(candidates)} students of the roster: {named}",
        )
    elif (odd := disguise(name)) and name.replace("_", " ").strip() != written(roster[candidates[0]]):
        why = (
            f"它读作名单中的 {named}，但写法不同（{odd}）：若确是此人，请在 roster.csv 中按 LMS 的写法写名字",
            f"it reads as {named} of the roster but is written otherwise ({odd}): if it is them, write the name in "
            "roster.csv as the LMS writes it",
        )
    else:
        return candidates[0], ""
    return "", visible(bilingual(f"拒收，一份也不猜：{why[0]}", f"refused, none is guessed: {why[1]}"))


def worksheet_match(identity: dict[str, str] | None, roster: dict[str, dict[str, str]]) -> tuple[str, str]:
    """(the student, "") whom a Moodle participant's identity fields in the grading worksheet ({roster column:
    value}) name in the roster, or ("", why not): none, or several (each field must name the same student)."""
    if identity is None:
        return "", bilingual(
            "未知学生：评分工作表中没有这个参与者",
            "unknown student: the grading worksheet has no such participant",
        )
    found = sorted(
        student
        for student, row in roster.items()
        if any(
            value.casefold() == (row.get(column) or "").strip().casefold()
            for column, value in identity.items()
        )
    )
    if len(found) == 1:
        return found[0], ""
    shown = visible(", ".join(f"{column} {value}" for column, value in identity.items()))
    if not found:
        return "", bilingual(
            f"未知学生：名单中没有评分工作表给出的 {shown}",
            f"unknown student: no roster line has the grading worksheet's {shown}",
        )
    return "", bilingual(
        f"拒收，一份也不猜：评分工作表的 {shown} 对应名单中的 {', '.join(found)}",
        f"refused, none is guessed: the grading worksheet's {shown} name {', '.join(found)} of the roster",
    )


def written(row: dict[str, str]) -> str:
    return (row.get("name") or "").strip()


def refuse_shared(people: list[Submitter]) -> None:
    """Refuse every submitter of a student several submitters map to (a Moodle student renamed like a classmate):
    none is guessed, and the student's earlier upload, if any, stays as it was."""
    claims: dict[str, list[Submitter]] = {}
    for person in people:
        if person.student:
            claims.setdefault(person.student, []).append(person)
    for student, claimants in claims.items():
        if len(claimants) > 1:
            users = ", ".join(sorted(p.user for p in claimants))
            for person in claimants:
                person.result = bilingual(
                    f"拒收：下载中有 {len(claimants)} 名提交者（{users}）都对应学生 {student}，一份也不猜",
                    f"refused: {len(claimants)} submitters of the download ({users}) map to the student {student}; "
                    "none is guessed",
                )


def notebook_name(original: str, notebooks: list[str], only_notebook: bool) -> str:
    """The name a file takes in the unit folder: the unit's notebook it is (an LMS's `-1` dropped, or the only
    notebook of a one-notebook unit), else its own."""
    if not original.endswith(".ipynb") or original in notebooks:
        return original
    if unnumbered(original) in notebooks:
        return unnumbered(original)
    return notebooks[0] if only_notebook and len(notebooks) == 1 else original


def unnumbered(original: str) -> str:
    return RESUBMITTED.sub("", original)


def resubmission(member: tuple[str, zipfile.ZipInfo]) -> tuple[int, tuple]:
    """How late a file (its original name, its entry) was handed in among those of one name: the LMS's number
    (`-2` after `-1` after none), then the time the zip gives it."""
    original, info = member
    number = RESUBMITTED.search(original)
    return (int(number[1]) if number else 0, info.date_time)


def upload(archive: zipfile.ZipFile, person: Submitter, unit: str, notebooks: list[str]) -> intake.Upload:
    """The submitter's files as the unit's: of several taking one name (resubmissions), the latest; the others
    are listed in `person.older`."""
    only = len({unnumbered(name) for name, _ in person.members if name.endswith(".ipynb")}) == 1
    latest: dict[str, tuple[str, zipfile.ZipInfo]] = {}
    for original, info in person.members:
        name = notebook_name(original, notebooks, only)
        if name in latest:
            older, latest[name] = sorted([latest[name], (original, info)], key=resubmission)
            person.older.append(older[0])
        else:
            latest[name] = (original, info)
    members = [(name, info) for name, (_, info) in latest.items()]
    path = f"{person.student}/{unit}"
    return intake.Upload(person.student, unit, lambda: intake.member_files(archive, members, path))


def older_note(person: Submitter) -> list[str]:
    """The note of the files left out for a later resubmission, naming the ones kept (none: no note)."""
    if not person.older:
        return []
    kept = sorted(visible(name) for name, _ in person.members if name not in person.older)
    older = sorted(visible(name) for name in person.older)
    return [
        bilingual(
            f"同名文件取最后一次提交 {', '.join(kept)}，略过 {', '.join(older)}",
            f"of files of one name the last handed in, {', '.join(kept)}, kept; left out: {', '.join(older)}",
        )
    ]


def write_report(path: Path, people: list[Submitter], stray: list[str], unit: str) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(REPORT_COLUMNS)
        for p in people:
            files = " | ".join(name for name, _ in p.members)
            late, when = (
                "yes" if p.late else "",
                p.submitted.isoformat(timespec="seconds") if p.submitted else "",
            )
            row = [p.user, p.name, p.student, unit, files, late, when, p.result]
            writer.writerow(map(cell, row))
        for name in stray:
            writer.writerow(map(cell, ["", "", "", unit, name, "", "", "left out: not in the LMS's layout"]))


def import_zip(
    course: Course,
    download: Path,
    unit: str,
    into: Path,
    roster_path: Path,
    layout: str = "auto",
    limits: intake.Limits | None = None,
    records: tuple[Path, dt.tzinfo] | None = None,
) -> tuple[list[Submitter], list[str]]:
    """Place the download's notebooks into `into/<student>/<unit>/` (`unit` by its full name): every student
    found, with the result, and the files in neither layout (left out). `records`: the LMS's record of submission
    times and the zone of those written without an offset (course/grading/lms_times.py), read before anything is
    placed; the placed students' times go to `into/timestamps.csv`."""
    roster = semester.read_roster(roster_path)
    if not zipfile.is_zipfile(download):
        raise ValueError(bilingual(f"不是 zip 文件：{download}", f"not a zip file: {download}"))
    with zipfile.ZipFile(download) as archive:
        layout = detected(archive, layout)
        times = lms_times.read_times(records[0], layout, records[1]) if records else {}
        groups = lms_times.read_groups(records[0], layout) if records else {}
        identities = lms_times.moodle_identities(records[0]) if records and layout == "moodle" else None
        into.mkdir(parents=True, exist_ok=True)
        people, stray = submitters(archive, layout)
        people, refused = (
            team_folders(people, groups, set(identities or ())) if layout == "moodle" else (people, [])
        )
        people += group_members(people, groups, layout)  # after the submitters: placed after theirs
        identify(people, roster, layout, identities)
        for person in people:
            if person.source and not person.source.result.startswith("placed"):
                person.result = person.result or bilingual(
                    f"未放入：小组的提交者 {person.source.user} 未被放入",
                    f"not placed: the group's submitter {person.source.user} was not placed",
                )
            if person.result:
                continue
            try:
                notes = intake.place(
                    upload(archive, person, unit, course.notebooks(unit)),
                    into,
                    False,
                    None,
                    limits or intake.LIMITS,
                )
            except intake.Refused as error:
                person.result = str(error)
            else:
                person.result = "; ".join(["placed", *notes, *older_note(person), *group_note(person)])
                person.submitted = times.get(person.user) or (person.source and person.source.submitted)
    people += refused
    if records:
        placed = {p.student: p.submitted for p in people if p.result.startswith("placed") and p.submitted}
        lms_times.write_times(into, unit, placed)
    write_report(report_path(into, unit), people, stray, unit)
    return people, stray


def report_path(into: Path, unit: str) -> Path:
    return into / f"lms_import_{unit}.csv"


def main(
    course: Course,
    download: str,
    unit: str,
    into: str,
    roster: str | None,
    layout: str = "auto",
    times: str | None = None,
) -> int:
    """`python -m course import`: place, then say what was not placed, who was late and whose time the LMS's
    records (`times`) lack; 1 if anything was not placed."""
    roster_path = Path(roster) if roster else course.root / "roster.csv"
    target, (unit,) = Path(into), course.select([unit])
    zone = semester.load_policy(semester.semester_path(course), course).zone  # of Moodle's times
    records = (Path(times), zone) if times else None
    people, stray = import_zip(course, Path(download), unit, target, roster_path, layout, records=records)
    placed = [p for p in people if p.result.startswith("placed")]
    problems = [p for p in people if not p.result.startswith("placed")]
    print(bilingual(f"已放入 {target}：{len(placed)} 名学生", f"placed in {target}: {len(placed)} students"))
    for person in problems:
        print(visible(f"{person.name} ({person.user}): {person.result}"))
    for name in stray:
        print(bilingual(f"略过（不是 LMS 的格式）：{name}", f"left out (not in the LMS's layout): {name}"))
    with zipfile.ZipFile(download) as archive:
        if not records and detected(archive, layout) == "moodle":
            print(
                bilingual(
                    "注意：没有评分工作表（--times），Moodle 学生只按全名认出，而全名学生可以自己修改；请给出评分工作表，按电子邮件或 ID 号认人",
                    "note: without the grading worksheet (--times), Moodle students were found by their full name, "
                    "which a student may edit; give the worksheet to find them by email address or ID number",
                )
            )
    if records:
        untimed = [p.student for p in placed if p.submitted is None]
        print(
            bilingual(
                f"LMS 记录的提交时间写入 {target / lms_times.TIMES_FILE}（交给 course grade --timestamps）；"
                f"记录中没有时间的学生：{untimed}",
                f"the LMS's submission times are in {target / lms_times.TIMES_FILE} (for course grade "
                f"--timestamps); students without a time in its records: {untimed}",
            )
        )
    elif late := [p.student or p.name for p in people if p.late]:
        print(
            bilingual(
                f"Canvas 标为迟交：{late}；下载中没有提交时间：用 --times 给出 LMS 的记录",
                f"late according to Canvas: {late}; the download has no times: give the LMS's records with --times",
            )
        )
    report = report_path(target, unit)
    print(bilingual(f"导入记录：{report}", f"import report: {report}"))
    return 1 if problems or stray else 0
