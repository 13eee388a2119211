"""`python -m course export --feedback-for canvas|moodle --unit UNIT`: each student's feedback pages of one unit laid
out as the LMS takes them back.

- Moodle: `feedback_<unit>.zip` for the assignment's "Upload multiple feedback files in a zip", one top-level folder
  per student named as Moodle's own download names it (`Full Name_<participant id>_assignsubmission_file_/`, the
  name's `_` written as a space, as Moodle does), holding the student's pages; and `worksheet_<unit>.csv`, the
  assignment's grading worksheet (`--worksheet`, "Download grading worksheet") with `Grade` (the unit's total after
  the late penalty, scaled to the worksheet's `Maximum Grade`) and `Feedback comments` (text made inert: the points
  of every graded cell, the hand-grader's comments, the late penalty, a line each) filled, for "Upload grading
  worksheet". Moodle's participant ids change with every assignment: the worksheet gives this one's, and its participants are
  found in the roster as `course import` finds them (course/grading/lms_import.py): by the identity fields it shows,
  by the full name (which a student may edit) only where it shows none. A team assignment's worksheet gets no zip (`TEAM_ZIP`).
- Canvas (no bulk feedback upload, no comments in its gradebook CSV): `canvas_feedback_<unit>/`, one folder per
  student named by Canvas's download naming (`<lastfirst>_<user id>_feedback/`, the user id the roster's
  `canvas_id`), each page named `<lastfirst>_<user id>_feedback_<page>`, to attach in SpeedGrader.

The pages must be the current ones: while `course feedback` would make any page of the unit again (a hand grade,
an import or an extension since), the export is refused before anything is written.
"""

from __future__ import annotations

import html
import shutil
import sqlite3
import zipfile
from pathlib import Path

from course import neutral
from course.grading import feedback, feedback_inputs, gradebook_db, lms, lms_import, lms_times, semester
from course.grading.atomic import replace_csv
from course.grading.handgrade import inert
from course.grading.lock import grading_lock
from course.layout import Course
from utils.messages import bilingual

LMSS = ("canvas", "moodle")
MOODLE_ID, MOODLE_NAME = lms_times.MOODLE_ID, lms_times.MOODLE_NAME
GRADE, MAXIMUM, COMMENTS = "Grade", "Maximum Grade", "Feedback comments"
WORKSHEET_COLUMNS = (MOODLE_ID, GRADE, MAXIMUM, COMMENTS)  # and the full name or an identity field
WORKSHEET_FIX = (
    f"给出这次作业的 Moodle 评分表（“下载评分工作表”，含 {', '.join(WORKSHEET_COLUMNS)} 列；在作业设置中打开反馈评语）",
    f"give this assignment's Moodle grading worksheet ('Download grading worksheet', with the columns "
    f"{', '.join(WORKSHEET_COLUMNS)}; turn on Feedback comments in the assignment's settings)",
)

# Moodle 4.1+ names a team submission's download folder by its group id, and a version of its feedback-zip import
# (mod/assign/feedback/file/importziplib.php, get_participant_mapping) reads a folder's number as a group id in a
# team assignment: a page in a folder named by a participant id could reach another group's students.
TEAM_ZIP = (
    "小组作业：不写反馈 zip（Moodle 4.1 起可能把文件夹中的数字当作小组 id，页面可能发给别的小组）；成绩和评语在评分表中，"
    "反馈页请在评分界面逐个附上",
    "a team assignment: no feedback zip is written (Moodle 4.1+ may read a folder's number as a group id, and a page "
    "could reach another group); grades and comments are in the worksheet, attach the pages one by one in the "
    "grader",
)


def current_pages(course: Course, unit: str) -> dict[str, list[Path]]:
    """{student: their feedback pages of the unit}, refused while `course feedback` would make any of them again."""
    semester.refresh_late_columns(course)  # an extension granted since: the pages must show it
    if stale := sorted(feedback.stale(course, [unit])):
        shown = neutral.visible(", ".join(feedback_inputs.key(pair) for pair in stale[:3]))
        raise ValueError(
            bilingual(
                f"{len(stale)} 份反馈不是最新的（例如 {shown}）：先运行 `python -m course feedback {unit}`，再导出",
                f"{len(stale)} feedback pages are out of date (e.g. {shown}): run `python -m course feedback {unit}` "
                "first, then export",
            )
        )
    return {
        student: sorted((course.feedback / student / unit).glob("*.html"))
        for student, _ in feedback_inputs.made_pairs(course, [unit])
    }


def hand_comments(course: Course, unit: str) -> dict[tuple[str, str, str], str]:
    """{(student, notebook stem, grade_id): the hand-grader's comment} of the unit, from the gradebook."""
    with gradebook_db.readable(course) as path:
        if not path.is_file():
            return {}
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            found = db.execute(feedback_inputs.COMMENTS + " WHERE a.name = ?", (unit,)).fetchall()
    return {(student, notebook, cell): manual for student, _, notebook, cell, _, manual in found if manual}


def summary(
    found: lms.Table, student: str, unit: str, remarks: dict[tuple[str, str, str], str], rate: float
) -> str:
    """Text for the LMS's comment box: each graded cell's points (and the hand-grader's comment), the late
    penalty, the total; every line printable, HTML-escaped and ended by `<br>` (Moodle stores the column as HTML, where
    a line break alone shows as a space), never a formula."""
    lines = []
    for column in (c for c in found.columns if c.unit == unit):
        stem = column.notebook.removesuffix(".ipynb")
        score = lms.number(found.cells[student].get(column.name))
        first, *more = remarks.get((student, stem, column.grade_id), "").splitlines() or [""]
        lines.append(
            f"{stem}/{column.grade_id}: {score} / {lms.number(column.points)}"
            + (f" — {first}" if first else "")
        )
        lines += [f"    {remark}" for remark in more if remark.strip()]  # a composed comment's other lines
    if rate:
        lines.append(f"迟交扣分 / late penalty: {rate:.0%}")
    lines.append(
        f"总分 / total: {lms.number(found.totals[student][unit])} / {lms.number(found.possible(unit))}"
    )
    return inert("<br>\n".join(html.escape(neutral.visible(line), quote=False) for line in lines))


def read_worksheet(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The worksheet's header and lines, checked as `lms_times.moodle_sheet` checks them (a participant id each),
    and a maximum grade each, and something to tell the participants by (a full name or an identity field)."""
    header, lines = lms_times.moodle_sheet(path, WORKSHEET_COLUMNS, WORKSHEET_FIX)
    if MOODLE_NAME not in header and not lms_times.shows_identity(header):
        problem = (
            "表头既没有全名也没有身份字段（Moodle 的匿名评分对看不到身份的账户隐藏两者）",
            "the header names no one, neither the full name nor an identity field (Moodle's blind marking hides "
            "both from an account that may not see identities)",
        )
        raise semester.setting_error(path, 1, problem, lms_times.IDENTITY_FIX)
    for number, _, line in lines:
        try:
            if float(line[MAXIMUM]) <= 0:
                raise ValueError
        except (TypeError, ValueError):
            problem = (f"{MAXIMUM} 无法读取", f"its {MAXIMUM} cannot be read")
            raise semester.setting_error(path, number, problem, WORKSHEET_FIX) from None
    return header, [line for _, _, line in lines]


def moodle_folder(name: str, user: str) -> str:
    """The top-level folder Moodle's download gives a participant (its `_` kept for the separators only)."""
    shown = "".join(c for c in name.replace("_", " ") if c.isprintable() and c not in "/\\").strip()
    return f"{shown or 'Participant'}_{user}_assignsubmission_file_"


def write_moodle(
    course: Course, unit: str, into: Path, roster: dict, worksheet: Path, pages: dict[str, list[Path]]
) -> tuple[int, list[str]]:
    """`feedback_<unit>.zip` and `worksheet_<unit>.csv`: how many students' feedback it holds, and who was left
    out and why (a participant the roster does not know, a student with pages not in the worksheet)."""
    header, lines = read_worksheet(worksheet)
    people = [
        lms_import.Submitter(lms_times.participant(line), line.get(MOODLE_NAME) or "") for line in lines
    ]
    identities = None
    if lms_times.shows_identity(header):  # who each participant is, not the name they may have edited
        identities = {
            person.user: lms_times.moodle_identity(line) for person, line in zip(people, lines, strict=True)
        }
    else:
        print(
            bilingual(
                f"注意：评分表只有全名。{lms_times.IDENTITY_FIX[0]}",
                f"note: the worksheet names students by their full name alone; {lms_times.IDENTITY_FIX[1]}",
            )
        )
    lms_import.identify(people, roster, "moodle", identities)
    found, remarks, rates = lms.table(course), hand_comments(course, unit), lms.penalty_rates(course)
    into.mkdir(parents=True, exist_ok=True)
    team = lms_times.MOODLE_GROUP in header  # a team assignment: no zip (TEAM_ZIP)
    partial, target = into / f"feedback_{unit}.zip.partial", into / f"feedback_{unit}.zip"
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for line, person in zip(lines, people, strict=True):
            if not person.result and person.student in pages and unit in found.totals.get(person.student, {}):
                for page in [] if team else pages[person.student]:
                    archive.write(page, f"{moodle_folder(person.name, person.user)}/{page.name}")
                total = found.totals[person.student][unit] / found.possible(unit) * float(line[MAXIMUM])
                line[GRADE] = f"{total:.2f}"
                rate = rates.get((person.student, unit), 0.0)
                line[COMMENTS] = summary(found, person.student, unit, remarks, rate)
            for key in (MOODLE_NAME, "Email address"):
                if key in line:
                    line[key] = neutral.cell(line[key] or "")
    replace_csv(into / f"worksheet_{unit}.csv", header, lines)  # Moodle reads UTF-8, a BOM or not
    if team:
        partial.unlink()
        target.unlink(missing_ok=True)  # an earlier export's, not to be taken for this one's
        print(bilingual(*TEAM_ZIP))
    else:
        partial.replace(target)
    placed = {p.student for p in people if not p.result and p.student in pages}
    ours = [c.name for c in found.columns if c.unit == unit]
    if waiting := sorted(s for s in placed if any(found.cells[s].get(name) is None for name in ours)):
        print(
            bilingual(
                f"书面回答尚待人工评分（成绩中计 0 分，评语中写明）：{waiting}",
                f"written answers not graded by hand yet (0 in the grade, said in the comment): {waiting}",
            )
        )
    unplaced = [f"{p.name} ({p.user}): {p.result}" for p in people if p.result]
    return len(placed), unplaced + [
        bilingual(f"{s}：评分表中没有此学生", f"{s}: not in the worksheet")
        for s in sorted(set(pages) - {p.student for p in people})
    ]


def canvas_name(row: dict[str, str]) -> str:
    """Canvas's `lastfirst` of a roster name ("Alice Li": "lialice"): letters only, so that the user id is the
    first number of the file name."""
    *first, last = (row.get("name") or "").split() or [""]
    return "".join(c for c in last + "".join(first) if c.isalpha()).casefold() or "student"


def write_canvas(unit: str, into: Path, roster: dict, pages: dict[str, list[Path]]) -> tuple[int, list[str]]:
    """`canvas_feedback_<unit>/<lastfirst>_<user id>_feedback/`: how many students' feedback it holds, and who was
    left out and why."""
    target, partial = into / f"canvas_feedback_{unit}", into / f".canvas_feedback_{unit}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    left_out = []
    for student, found in sorted(pages.items()):
        user = (roster.get(student, {}).get("canvas_id") or "").strip()
        if not user.isdigit():
            left_out.append(
                bilingual(f"{student}：名单中没有 canvas_id", f"{student}: no canvas_id in the roster")
            )
            continue
        prefix = f"{canvas_name(roster[student])}_{user}_feedback"
        (partial / prefix).mkdir()
        for page in found:
            shutil.copyfile(page, partial / prefix / f"{prefix}_{page.name}")
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return len(pages) - len(left_out), left_out


def main(
    course: Course, lms_name: str, unit: str, into: Path, roster_path: Path, worksheet: Path | None
) -> int:
    """Write the unit's feedback for the LMS into `into`, after every check; 1 if a student was left out."""
    (unit,) = course.select([unit])
    if lms_name not in LMSS:
        raise ValueError(bilingual(f"未知的 LMS {lms_name!r}", f"unknown LMS {lms_name!r}: {LMSS}"))
    if lms_name == "moodle" and worksheet is None:
        raise ValueError(
            bilingual(
                f"Moodle 需要 --worksheet：{WORKSHEET_FIX[0]}",
                f"Moodle needs --worksheet: {WORKSHEET_FIX[1]}",
            )
        )
    roster = semester.read_roster(roster_path)
    gradebook_db.settle(course)
    if worksheet is not None:
        read_worksheet(worksheet)  # checked before anything is written
    with grading_lock(
        course, "course export --feedback-for"
    ):  # no grading or hand grade changes it meanwhile
        pages = current_pages(course, unit)
        if lms_name == "moodle":
            count, left_out = write_moodle(course, unit, into, roster, worksheet, pages)
            written = [
                p for p in (into / f"feedback_{unit}.zip", into / f"worksheet_{unit}.csv") if p.exists()
            ]
        else:
            count, left_out = write_canvas(unit, into, roster, pages)
            written = [into / f"canvas_feedback_{unit}"]
    print(
        bilingual(
            f"{count} 名学生的反馈：{', '.join(map(str, written))}",
            f"feedback of {count} students: {', '.join(map(str, written))}",
        )
    )
    for line in left_out:
        print(bilingual("未导出：", "left out: ") + neutral.visible(line))
    return 1 if left_out else 0
