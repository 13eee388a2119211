"""`python -m course grade SUBMISSIONS`: autograde a class, one isolated child process per (student, unit).

Up to `--jobs` (student, unit) pairs are graded at once. nbgrader cannot share one sqlite gradebook between
concurrent runs, so each pair is graded against a private copy of the course's gradebook; as each pair finishes,
a `merge` job copies its grades into the course's gradebook (one merge at a time, see `course.grading.worker`), keeping
the hand grades given in formgrader, and its row is saved under `autograded/.progress/`. Pairs whose saved row
matches the submission as it is now are not graded again (unless `--all`): the weekly run grades the new unit,
and a class too large for one sitting is graded across several. One run at a time grades a course (a lock).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import datetime as dt
import hashlib
import hmac
import json
import os
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

import utils
from course import notebooks
from course.grading import (
    feedback_inputs,
    gradebook_db,
    intake,
    lms,
    overlay,
    resources,
    semester,
    similarity,
    stats,
)
from course.grading.atomic import replace_text
from course.grading.lock import grading_lock
from course.grading.pool import Job, LocalPool, NotGraded, RayPool, open_pool
from course.grading.runner import run_job
from course.judge import sandbox as judge_sandbox
from course.judge import tables
from course.layout import COURSE, Course
from course.neutral import cell, visible
from utils.messages import bilingual

STATUS_ZH = {
    "graded": "已评分",
    "cell timeout": "单元格超时",
    "kernel died": "内核崩溃",
    "kernel failed to start": "内核未能启动",
    "timeout": "超时",
    "error": "评分出错",
    "missing": "未提交",
    "unknown unit": "未知单元",
    "not graded": "未评分",  # refused at intake (course/grading/intake.py): the reason is in flag_reasons
}


FEEDBACK_PAGE = "job/feedback page"  # a `Row.seconds` key: part of "job", after its notebooks


@dataclass
class Row:
    """The result of one student's unit."""

    student: str
    unit: str
    max_score: float
    score: float = 0.0
    problems: dict[str, str] = field(default_factory=dict)  # notebook -> status other than "graded"
    cells: dict[str, float] = field(default_factory=dict)  # "notebook/grade_id" -> score
    flags: list[str] = field(default_factory=list)  # why it is flagged for review (judge, intake, its time)
    # "notebook/grade_id" -> {property: passed}: each judged property's verdict (course.grading.stats)
    checks: dict[str, dict[str, bool]] = field(default_factory=dict)
    sandboxes: set[str] = field(default_factory=set)  # where the judge ran the student's code
    node: str = ""  # the Ray node that graded it (`--ray`; empty on this machine's pool)
    # where the time went: "nb" -> nbgrader's autograde of it (execution and judge), "nb/judge" -> the judge,
    # "nb/grade_id" -> the judge's cases of that cell, "nb/stage/NAME" -> a stage of the notebook's run or of the
    # judge (course.judge.kernel, course.judge.preprocessor), "job" -> the whole job, FEEDBACK_PAGE -> the unit's
    # feedback page, made at the job's end, "merge" -> its share of a merge
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def status(self) -> str:
        if not self.problems:
            return "graded"
        return "; ".join(f"{status} ({nb})" if nb else status for nb, status in sorted(self.problems.items()))

    def status_bilingual(self) -> str:
        if not self.problems:
            return bilingual(STATUS_ZH["graded"], "graded")
        parts = [
            (STATUS_ZH[s] + (f"（{nb}）" if nb else ""), s + (f" ({nb})" if nb else ""))
            for nb, s in sorted(self.problems.items())
        ]
        return bilingual("；".join(zh for zh, _ in parts), "; ".join(en for _, en in parts))


def progress_folder(course: Course) -> Path:
    """Where each graded pair's row is saved as soon as it is in the gradebook (an unchanged pair keeps it)."""
    return course.autograded / ".progress"


def submission_digest(course: Course, student: str, unit: str) -> str:
    """A digest of every file of one submission (names and bytes) but its time (`timestamp.txt`: a corrected
    time changes the late penalty, never the grading)."""
    digest = hashlib.sha256()
    folder = course.submitted / student / unit
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != intake.TIMESTAMP):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def save_progress(course: Course, row: Row) -> None:
    record = dataclasses.asdict(row) | {"sandboxes": sorted(row.sandboxes)}
    record["digest"] = submission_digest(course, row.student, row.unit)
    path = progress_folder(course) / f"{row.student}__{row.unit}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_text(path, json.dumps(record, ensure_ascii=False))


def saved_record(course: Course, student: str, unit: str) -> dict | None:
    """The saved row (and submission digest) of a pair graded earlier, if any."""
    path = progress_folder(course) / f"{student}__{unit}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def saved_row(course: Course, student: str, unit: str) -> Row | None:
    """The saved row of a pair graded earlier, if the submission has not changed since."""
    record = saved_record(course, student, unit)
    if record is None or record.pop("digest", None) != submission_digest(course, student, unit):
        return None
    return Row(**record | {"sandboxes": set(record.get("sandboxes", []))})


def resubmitted(course: Course, student: str, unit: str) -> bool:
    """Whether the pair was graded before from another submission (its hand grades need review)."""
    record = saved_record(course, student, unit)
    return record is not None and record.get("digest") != submission_digest(course, student, unit)


def default_timeout() -> int:
    """Wall-clock seconds for one student's unit: the CPU interpreter is much slower than a GPU."""
    return 600 if utils.mode().is_gpu else 1800


def max_points(path: Path) -> float:
    """The notebook's points: its test cells' and its cells graded by hand."""
    return float(sum(notebooks.all_points(notebooks.read(path)).values()))


def unit_points(course: Course, unit: str) -> float:
    return sum(max_points(course.source / unit / nb) for nb in course.notebooks(unit))


def register_units(
    course: Course, units: list[str], students: dict[str, dict[str, str]] | None = None
) -> None:
    """Make sure the gradebook knows the units (nbgrader generate_assignment, release written to a temp dir) and
    the roster's `students` (`course.grading.lms.nbgrader_students`)."""
    with tempfile.TemporaryDirectory(prefix="course-register-") as tmp:
        request = {"action": "generate", "root": str(course.root), "units": units, "release_dir": tmp}
        request["students"] = students or {}
        request["source"] = str(course.source)
        request["db_url"] = gradebook_db.url(course)
        results, _ = run_job(request, 600)
    if students and not results.get(":students"):  # worker.STUDENTS
        print(
            bilingual(
                "警告：名单中的学生未能写入 nbgrader 成绩簿（formgrader 中可能没有姓名）",
                "warning: the roster's students could not be written to nbgrader's gradebook (formgrader may lack "
                "their names)",
            )
        )
    failed = [unit for unit in units if not results.get(unit, {}).get("success")]
    if failed:
        raise RuntimeError(
            bilingual(f"nbgrader 无法登记单元 {failed}", f"nbgrader could not register unit(s) {failed}")
            + "\n"
            + "\n".join(results.get(u, {}).get("log", "")[-2000:] for u in failed)
        )


@dataclass(frozen=True)
class Round:
    """The settings of one grading run: the seeds' salt, the sandbox asked for, and each pair's late work as its
    feedback tells it (`late_work`)."""

    salt: str = ""
    sandbox: str = "auto"
    late: dict[tuple[str, str], dict] = field(default_factory=dict)


def grading_salt(course: Course) -> str:
    """The course's grading-round salt (the overlay's, else `.grading_salt`, made once): a regrade sees the same
    hidden inputs."""
    if (private := overlay.salt()) is not None:
        return private
    path = course.root / ".grading_salt"
    path.parent.mkdir(parents=True, exist_ok=True)  # a new course folder (`--feedback-only` may come first)
    with contextlib.suppress(FileExistsError):  # made once, readable by the grader alone
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as made:
            made.write(secrets.token_hex(32))
    path.chmod(0o600)
    return path.read_text(encoding="utf-8").strip()


def grade_pair(
    course: Course,
    student: str,
    unit: str,
    timeout: float,
    scratch: Path,
    threads: int | None,
    settings: Round,
    where: LocalPool | RayPool,
    at_once: int = 1,
) -> Row:
    """Grade one student's unit against a private copy of the gradebook, `scratch/gradebook.db`, in the run's
    pool `where` (this machine's, or a Ray cluster's: the files the job reads go to its node, what it writes comes
    back)."""
    submitted = course.submitted / student / unit
    present = [nb for nb in course.notebooks(unit) if (submitted / nb).exists()]
    row = Row(student, unit, unit_points(course, unit))
    row.problems.update({nb: "missing" for nb in course.notebooks(unit) if nb not in present})
    scratch.mkdir(parents=True)
    gradebook_db.save_copy(course, scratch / "gradebook.db", (student, unit))
    request = {
        "action": "autograde",
        "root": str(course.root),
        "source": str(course.source),
        "unit": unit,
        "student": student,
        "notebooks": present,
        "feedback": True,
        "gradebook": str(scratch / "gradebook.db"),
        "salt": settings.salt,
        "sandbox": settings.sandbox,
        "judge_reports": str(scratch / "judge"),
        "late": settings.late.get((student, unit)),
    }
    job = Job(
        request,
        timeout,
        scratch / "grading.log",
        threads,
        at_once,
        inputs=(course.source / unit, submitted, scratch / "gradebook.db"),
        outputs=(
            course.autograded / student / unit,
            course.feedback / student / unit,
            scratch / "gradebook.db",
        ),
    )
    began = time.monotonic()
    results, timed_out, row.node = where.run(job)
    row.seconds["job"] = round(time.monotonic() - began, 1)
    row.seconds.update(job.seconds)  # on Ray: what it added to the job ("ray/pack", "ray/queued", …)
    for nb in present:
        entry = results.get(student, {}).get(nb)
        if entry is None:
            row.problems[nb] = "timeout" if timed_out else "error"
            continue
        row.score += sum(score for score, _ in entry["scores"].values())
        row.cells.update({f"{nb}/{gid}": score for gid, (score, _) in entry["scores"].items()})
        hand = notebooks.all_points(notebooks.read(course.source / unit / nb), hand_only=True)
        row.checks.update(stats.cell_checks(nb, entry, hand))
        judged = entry.get("judge") or {}
        row.seconds[nb] = entry.get("seconds", 0.0)
        if "page_seconds" in entry:
            row.seconds[FEEDBACK_PAGE] = entry["page_seconds"]
        if judged:
            row.seconds[f"{nb}/judge"] = judged.get("seconds", 0.0)
            row.seconds.update({f"{nb}/{gid}": s for gid, s in judged.get("cell_seconds", {}).items()})
            row.seconds.update(
                {f"{nb}/{gid}/self-check": s for gid, s in judged.get("selfcheck_seconds", {}).items()}
            )
            row.seconds.update({f"{nb}/stage/{name}": s for name, s in judged.get("stages", {}).items()})
            row.sandboxes.add(judged["sandbox"])
        row.flags += [f"{nb}: {reason}" for reason in judged.get("reasons", [])]
        if entry["status"] != "graded":
            row.problems[nb] = entry["status"]
    return row


def grade_pairs(
    course: Course,
    pairs: list[tuple[str, str]],
    folders: list[Path],
    timeout: float,
    jobs: int,
    log: Path,
    settings: Round = Round(),
    changed: frozenset[tuple[str, str]] = frozenset(),
    where: LocalPool | RayPool | None = None,
) -> list[Row]:
    """Grade the pairs, `jobs` at a time, each in its scratch folder, merging them into the course's gradebook
    as they finish (the `changed` ones resubmitted since they were graded); rows come back in the order of
    `pairs`.

    Merges run one at a time: pairs that finish while a merge runs wait, then go into the course's gradebook
    together, in one merge (a class that finishes all at once would otherwise queue one merge, seconds each,
    per pair). A pair merged by another's merge is done: its thread grades the next pair instead of merging
    whatever came in meanwhile (that made merges of one pair each, one after another, 64 merges for 80 pairs)."""
    where = where or LocalPool()  # one pool for the run: it spreads the jobs over the machine's GPUs
    log_lock, turn = threading.Lock(), threading.Condition()
    waiting: list[tuple[Row, Path]] = []  # graded, not yet taken by a merge
    merged: set[tuple[str, str]] = set()  # pairs whose merge has ended
    merging = False  # one merge at a time
    threads = max(
        1, resources.cpu_count() // jobs
    )  # torch's CPU threads per job: concurrent jobs share the cores

    def merge_waiting(mine: Row, folder: Path) -> None:
        """Merge every pair waiting, `mine` (graded in `folder`) among them, or, when another pair's merge took
        it, wait for that merge to end."""
        nonlocal merging
        pair = (mine.student, mine.unit)
        with turn:
            waiting.append((mine, folder))
            turn.wait_for(lambda: pair in merged or not merging)
            if pair in merged:
                return
            batch, merging = waiting[:], True
            waiting.clear()
        rows, folders = [row for row, _ in batch], [folder for _, folder in batch]
        try:
            began = time.monotonic()
            merge_gradebooks(course, rows, folders, folders[0] / "grading.log", changed)
            for row in rows:
                row.seconds["merge"] = round((time.monotonic() - began) / len(rows), 1)  # its share
                if "" not in row.problems:
                    save_progress(course, row)
        finally:
            with turn:
                merging = False
                merged.update((row.student, row.unit) for row in rows)
                turn.notify_all()

    def one(student: str, unit: str, folder: Path) -> Row:
        try:
            row = grade_pair(course, student, unit, timeout, folder, threads, settings, where, jobs)
        except NotGraded as error:  # every attempt's node died: graded by a later run
            row = Row(
                student, unit, unit_points(course, unit), problems={"": "not graded"}, flags=[str(error)]
            )
        except Exception as error:  # this pair's failure, never the class's
            row = Row(student, unit, unit_points(course, unit), problems={"": "error"})
            row.flags.append(f"grading failed: {type(error).__name__}: {error}")
        else:
            merge_waiting(row, folder)
        own = folder / "grading.log"
        text = own.read_text(encoding="utf-8", errors="replace") if own.is_file() else ""
        with log_lock, log.open("a", encoding="utf-8") as out:
            out.write(log_section(f"{student}/{unit}", text))
        return row

    with (
        ThreadPoolExecutor(jobs) as pool,
        tqdm(total=len(pairs), desc=bilingual("评分", "grading"), unit="unit") as progress,
    ):
        futures = [pool.submit(one, *pair, folder) for pair, folder in zip(pairs, folders, strict=True)]
        counts: dict[str, int] = {}
        try:
            for future in as_completed(futures):
                show_progress(progress, future.result(), counts)
        except BaseException:  # Ctrl-C: start no further pairs (running jobs got the signal too)
            for future in futures:
                future.cancel()
            where.stop()  # a cluster's tasks did not get it
            raise
    return [future.result() for future in futures]


def log_section(pair: str, text: str) -> str:
    """A pair's job log as the class's grading.log takes it: a header, then each line naming the pair, shown
    inert: what the job wrote (the student's kernel's stderr among it) cannot pose as another pair's line."""
    return f"######## {pair}\n" + "".join(f"{pair} | {visible(line)}\n" for line in text.splitlines())


def merge_gradebooks(
    course: Course,
    rows: list[Row],
    folders: list[Path],
    log: Path,
    changed: frozenset[tuple[str, str]] = frozenset(),
) -> None:
    """Copy every pair's grades from its private gradebook into the course's, one after another, keeping the
    hand grades; a hand grade that needs review again (`course.grading.worker.copy_submission`) flags its row."""
    merges = [
        {
            "gradebook": str(folder / "gradebook.db"),
            "unit": row.unit,
            "student": row.student,
            "resubmitted": (row.student, row.unit) in changed,
        }
        for row, folder in zip(rows, folders, strict=True)
    ]
    request = {"action": "merge", "root": str(course.root), "merges": merges}
    request["db_url"] = gradebook_db.url(course)
    results, _ = run_job(request, 300 + 10 * len(merges), log)
    for row in rows:
        merged = results.get(f"{row.student}/{row.unit}")
        if not merged:
            row.problems[""] = "error"  # graded, but the gradebook lacks it: see grading.log
            continue
        row.flags += [
            bilingual(
                f"{cell}：人工评分需复核（自动评分的部分或提交已改变）",
                f"{cell}: hand grade needs review (its autograded part or the submission changed)",
            )
            for cell in merged["review"]
        ]


CSV_COLUMNS = [
    "student_id",
    "unit",
    "score",
    "max_score",
    "status",
    "flagged",
    "flag_reasons",
    "sandbox",
    "node",
]


def write_csv(
    rows: list[Row],
    path: Path,
    extra: Callable[[Row], dict[str, str]] | None = None,
    keep_others: bool = False,
) -> None:
    """Write one line per row; `extra(row)` gives further columns (late work, provenance); `keep_others` keeps
    the lines of pairs not in `rows` from the file as it was (regrading one student or unit)."""
    added = list(extra(rows[0])) if extra and rows else []
    kept = []
    if keep_others and path.is_file():
        ours = {(cell(row.student), cell(row.unit)) for row in rows}
        with path.open(newline="", encoding="utf-8") as f:
            kept = [r for r in csv.DictReader(f) if (r["student_id"], r["unit"]) not in ours]
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_COLUMNS + added)
        for line in kept:
            writer.writerow([line.get(column, "") for column in CSV_COLUMNS + added])
        for row in rows:
            flagged = "yes" if row.flags else ""
            sandbox = "+".join(sorted(row.sandboxes))
            writer.writerow(
                [
                    cell(row.student),
                    cell(row.unit),
                    f"{row.score:g}",
                    f"{row.max_score:g}",
                    cell(row.status),
                    flagged,
                    cell(" | ".join(row.flags)),
                    sandbox,
                    cell(row.node),
                    *(extra(row).values() if extra else []),
                ]
            )


def print_table(rows: list[Row], why: bool = False) -> None:
    """One line per row; `why`: with the first reason it is flagged (shortened; all of them in grades.csv)."""
    header = ("学生 Student", "单元 Unit", "得分 Score", "状态 Status") + (("原因 Why",) if why else ())
    lines = [
        (r.student, r.unit, f"{r.score:g} / {r.max_score:g}", r.status_bilingual())
        + ((first_reason(r),) if why else ())
        for r in rows
    ]
    widths = [max(len(x) for x in column) for column in zip(header, *lines, strict=False)]
    for line in [header, *lines]:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False)).rstrip())


# What a row came to, in the order the summary counts them; all but "graded" need a look.
OUTCOMES = {
    "graded": "已评分",
    "flagged for review": "待复核",
    "missing": "缺少笔记本",
    "failed": "评分失败",
    "not graded": "未评分",
    "unknown unit": "未知单元",
}


def outcome(row: Row) -> str:
    """The row's outcome: refused at intake or of an unknown unit, failed (timeout, error, a dead kernel…), a
    notebook missing, flagged for review, or graded."""
    statuses = set(row.problems.values())
    for refused in ("not graded", "unknown unit"):
        if refused in statuses:
            return refused
    if statuses - {"missing"}:
        return "failed"
    if statuses:
        return "missing"
    return "flagged for review" if row.flags else "graded"


def first_reason(row: Row, width: int = 100) -> str:
    if not row.flags:
        return ""
    more = f" (+{len(row.flags) - 1})" if len(row.flags) > 1 else ""
    first = visible(row.flags[0])  # on the console: it may quote what the student wrote
    text = first if len(first) <= width else first[: width - 1] + "…"
    return text + more


def count_line(counts: dict[str, int]) -> tuple[str, str]:
    """ "graded 480, failed 3" (zh, en), in the order of OUTCOMES."""
    shown = [kind for kind in OUTCOMES if counts.get(kind)]
    return (
        "，".join(f"{OUTCOMES[kind]} {counts[kind]}" for kind in shown),
        ", ".join(f"{kind} {counts[kind]}" for kind in shown),
    )


def show_progress(progress: tqdm, row: Row, counts: dict[str, int]) -> None:
    """One more pair done: the bar moves and counts its outcome; a pair that needs a look is named at once."""
    kind = outcome(row)
    counts[kind] = counts.get(kind, 0) + 1
    if kind != "graded":
        progress.write(
            f"{row.student}/{row.unit}: {row.status_bilingual()} {first_reason(row, 200)}".rstrip()
        )
    progress.set_postfix_str(bilingual(*count_line(counts)), refresh=False)
    progress.update()


def print_summary(rows: list[Row], verbose: bool = False) -> None:
    """The end of a run: the counts by outcome, then only the pairs that need a look (`verbose`: every pair)."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[outcome(row)] = counts.get(outcome(row), 0) + 1
    zh, en = count_line(counts)
    print(bilingual(f"结果（共 {len(rows)} 份）：{zh}", f"results of {len(rows)} pairs: {en}"))
    look = [row for row in rows if outcome(row) != "graded"]
    if verbose:
        print_table(rows, why=True)
    elif look:
        print(
            bilingual(
                f"需要查看的 {len(look)} 份（每份的结果见 grades.csv；--verbose 列出全部）：",
                f"{len(look)} need a look (every pair is in grades.csv; --verbose lists them all):",
            )
        )
        print_table(look, why=True)
    else:
        print(
            bilingual(
                "没有需要查看的提交（每份的结果见 grades.csv）",
                "nothing needs a look (every pair is in grades.csv)",
            )
        )


def copy_class(
    course: Course,
    submissions: Path,
    only: Callable[[str, str], bool] | None = None,
    times: dict[tuple[str, str], dt.datetime] | None = None,
) -> list[intake.Intake]:
    """Place the class's known units into submitted/ through intake (course/grading/intake.py; originals untouched,
    submitted/ itself is checked and rewritten in place); every (student, unit) found (with `only`, those it
    accepts: the others are not touched), refused ones with the reason."""
    return intake.take_class(course, submissions, only, times)


def back_up_gradebook(course: Course, keep: int = 20) -> Path | None:
    """Copy the gradebook to `gradebook_backups/` before a grading run writes it; the `keep` newest stay."""
    if not course.db and not course.gradebook.exists():
        return None
    folder = course.root / "gradebook_backups"
    folder.mkdir(exist_ok=True)
    backup = folder / f"gradebook-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.db"
    gradebook_db.save_copy(course, backup)
    for old in sorted(folder.glob("gradebook-*.db"))[:-keep]:
        old.unlink()
    return backup


@dataclass(frozen=True)
class Selection:
    """Which pairs a run grades (all, or some students / units), their submission times, and the salt."""

    students: tuple[str, ...] = ()
    units: tuple[str, ...] = ()
    timestamps: Path | None = None  # CSV of student_id,unit,timestamp for zip uploads
    salt: str = ""  # empty: the course's grading salt

    @property
    def narrowed(self) -> bool:
        return bool(self.students or self.units)

    def accepts(self, student: str, unit: str) -> bool:
        return (not self.students or student in self.students) and (not self.units or unit in self.units)


def no_world_writable() -> None:
    """Whatever the caller's umask, nothing this run (or nbgrader in its children) makes is world-writable."""
    os.umask(os.umask(0o022) | 0o022)


def grade(
    course: Course,
    submissions: Path,
    timeout: float | None = None,
    jobs: int | None = None,
    sandbox: str = "auto",
    everything: bool = False,
    selection: Selection = Selection(),
    ray: str | None = None,
) -> list[Row]:
    """Copy the class into submitted/, autograde each new or changed (student, unit), write grades.csv and
    feedback. Every setting is checked before anything is placed; one run at a time grades a course.

    `everything`: grade every pair again, changed or not (`--all`; hand grades are kept all the same).
    `selection`: only some students or units (the others keep their grades), late work, the salt.
    `ray`: grade on the Ray cluster at this address ("auto": the one this machine is in), checked first."""
    if jobs is not None and jobs < 1:
        raise ValueError(bilingual(f"--jobs 至少为 1，收到 {jobs}", f"--jobs must be at least 1, got {jobs}"))
    timeout = timeout or default_timeout()
    judge_sandbox.choose(sandbox)  # no isolation here: refused before anything is graded
    gradebook_db.settle(course)  # a wrong URL or password, another database: refused before grading
    overlay.check()  # a private judge that fails to load, named with its own error
    no_world_writable()
    policy = semester.load_policy(semester.semester_path(course), course)
    uploads = semester.read_timestamps(selection.timestamps, course, policy.zone)
    roster = semester.course_roster(course)  # the one list of the course's students
    with open_pool(ray) as where, grading_lock(course):
        back_up_gradebook(course)
        intakes = copy_class(course, submissions, selection.accepts if selection.narrowed else None, uploads)
        pairs = [(i.student, i.unit) for i in intakes]
        refused = {(i.student, i.unit): i.refused for i in intakes if i.refused}
        version, salt = semester.course_version(), selection.salt or grading_salt(course)
        for warning in semester.version_warnings(course, [u for _, u in pairs], version):
            print(warning)
        known = set(course.units())
        gradable = [pair for pair in pairs if pair[1] in known and pair not in refused]
        earlier = {} if everything else {pair: row for pair in gradable if (row := saved_row(course, *pair))}
        if earlier:
            print(
                bilingual(
                    f"已评且提交未改动，保留原分数：{len(earlier)} 份（--all 全部重评）",
                    f"unchanged since graded, kept: {len(earlier)} (--all grades them again)",
                )
            )
        graded_pairs = [pair for pair in gradable if pair not in earlier]
        changed = frozenset(pair for pair in graded_pairs if resubmitted(course, *pair))
        units = sorted({unit for _, unit in graded_pairs})
        if units:
            print(bilingual("正在登记单元到 gradebook……", "registering units in the gradebook…"))
            register_units(course, units, lms.nbgrader_students(roster))
        log = course.autograded / "grading.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        if not earlier and not selection.narrowed:
            log.write_text("", encoding="utf-8")
        graded: dict[tuple[str, str], Row] = dict(earlier)
        if graded_pairs:
            memory, gpus = resources.gradings_memory_gib(), resources.gpu_memory_gib()
            jobs = (
                jobs
                or where.slots
                or resources.default_jobs(len(graded_pairs), resources.cpu_count(), gpus, memory)
            )
            if isinstance(where, LocalPool):  # a Ray node fits each job's limits to its own tables
                jobs = tables.fit_jobs(jobs, judge_sandbox.LIMITS)
            print(bilingual(f"同时评分 {jobs} 份", f"grading {jobs} at a time"))
            if memory is not None and isinstance(where, LocalPool):
                resources.warn_memory(jobs, memory, "cpu" if gpus is None else "gpu")
            with tempfile.TemporaryDirectory(prefix="course-grade-") as tmp:
                folders = [Path(tmp) / f"pair{i}" for i in range(len(graded_pairs))]
                settings = Round(salt, sandbox, late_work(course, graded_pairs, uploads, policy))
                rows = grade_pairs(
                    course, graded_pairs, folders, timeout, jobs, log, settings, changed, where
                )
            graded.update({(row.student, row.unit): row for row in rows})
        rows = [graded.get(pair) or not_graded(course, pair, refused.get(pair)) for pair in pairs]
        for row, found in zip(rows, intakes, strict=True):
            row.flags += found.notes + similarity.saved_flags(course, row.student, row.unit)
        flag_unlisted(rows, roster)
        times = submission_times(course, rows, uploads, policy)
        columns = grade_columns(policy, times, semester.provenance(salt, version))
        write_csv(rows, course.root / "grades.csv", columns, keep_others=selection.narrowed)
        stats.write_checks(rows, course.root / stats.CHECKS_FILE, keep_others=selection.narrowed)
        lms.write_cells(course)
        feedback_inputs.record_made(
            course, [pair for pair in graded_pairs if "" not in graded[pair].problems]
        )
    return rows


def feedback_salt(salt: str) -> str:
    """The secret of a feedback-only run: derived from final grading's by an HMAC, so it reveals nothing of it."""
    return hmac.new(salt.encode(), b"feedback-only", hashlib.sha256).hexdigest()[:32]


def feedback_only(
    course: Course,
    submissions: Path,
    timeout: float | None = None,
    jobs: int | None = None,
    sandbox: str = "auto",
    selection: Selection = Selection(),
    ray: str | None = None,
) -> list[Row]:
    """Grade a scratch copy of the course with the feedback salt and write only the feedback HTML, into
    `feedback_preview/<student>/<unit>/` (with `grades_preview.csv`): the course's gradebook, grades.csv,
    submitted/ and feedback/ are never written."""
    preview = course.root / "feedback_preview"
    gradebook_db.settle(course)
    salt = feedback_salt(grading_salt(course))
    with tempfile.TemporaryDirectory(prefix="course-feedback-") as tmp:
        scratch = Course(Path(tmp) / "course", course.wrong)
        shutil.copytree(course.source, scratch.source)
        gradebook_db.save_copy(course, scratch.gradebook)
        rows = grade(
            scratch,
            submissions,
            timeout,
            jobs,
            sandbox,
            selection=dataclasses.replace(selection, salt=salt),
            ray=ray,
        )
        preview.mkdir(exist_ok=True)
        for row in rows:
            made = scratch.feedback / row.student / row.unit
            if made.is_dir():
                intake.replace(
                    preview / row.student / row.unit,
                    lambda new, made=made: shutil.copytree(made, new, symlinks=True),
                )
        shutil.copyfile(scratch.root / "grades.csv", preview / "grades_preview.csv")
    return rows


def flag_unlisted(rows: list[Row], roster: dict[str, dict[str, str]] | None) -> None:
    """Flag for review the rows of students the course's roster.csv does not list (none without a roster)."""
    for row in rows:
        if roster is not None and row.student not in roster:
            row.flags.append(
                bilingual(
                    f"{row.student} 不在名单 {lms.ROSTER_FILE} 中：加入名单（否则不会导出到 LMS），或检查文件夹名",
                    f"{row.student} is not in {lms.ROSTER_FILE}: add them (else no LMS export has them) or check the "
                    "folder's name",
                )
            )


def not_graded(course: Course, pair: tuple[str, str], refused: str | None) -> Row:
    """The row of a pair nothing graded: refused at intake (with the reason), or of an unknown unit."""
    if refused is None:
        return Row(*pair, 0.0, problems={"": "unknown unit"})
    points = unit_points(course, pair[1]) if pair[1] in course.units() else 0.0
    return Row(*pair, points, problems={"": "not graded"}, flags=[refused])


def submission_times(
    course: Course, rows: list[Row], uploads: dict[tuple[str, str], dt.datetime], policy: semester.Policy
) -> dict[tuple[str, str], dt.datetime | None]:
    """Each row's submission time (None: unknown; without an offset: in the policy's zone); a time that cannot be
    read, or none known for a unit with a due date (counted on time), is flagged on its row only."""
    times = {}
    for row in rows:
        try:
            times[row.student, row.unit] = when = semester.submission_time(
                course, row.student, row.unit, uploads, policy.zone
            )
        except (OSError, ValueError, OverflowError) as error:
            times[row.student, row.unit] = None
            row.flags.append(f"unreadable submission time (timestamp.txt): {error}")
            continue
        if when is None and (due := policy.due_for(row.student, row.unit)) is not None:
            due_text = due.isoformat(timespec="minutes")
            row.flags.append(
                bilingual(
                    f"没有提交时间（截止 {due_text}）：按按时提交计；用 --timestamps 给出时间",
                    f"no submission time (due {due_text}): counted as on time; give it with --timestamps",
                )
            )
    return times


def late_work(
    course: Course,
    pairs: list[tuple[str, str]],
    uploads: dict[tuple[str, str], dt.datetime],
    policy: semester.Policy,
) -> dict[tuple[str, str], dict]:
    """{pair: {"fraction", "late_by"}}: what each pair's feedback says of its late work, from the policy and times
    grades.csv's late columns take (a pair whose time cannot be read is left out: its row is flagged)."""
    found = {}
    for student, unit in pairs:
        with contextlib.suppress(OSError, ValueError, OverflowError):
            when = semester.submission_time(course, student, unit, uploads, policy.zone)
            late = policy.late(student, unit, when)
            found[student, unit] = {"fraction": late.fraction, "late_by": late.late_by_text()}
    return found


def grade_columns(
    policy: semester.Policy, times: dict[tuple[str, str], dt.datetime | None], made: dict[str, str]
) -> Callable[[Row], dict[str, str]]:
    """The grades CSV's columns after the sandbox: late work (`policy`, at `times`; `course export` computes them
    again from the semester file as it is then) and provenance (`made`)."""

    def columns(row: Row) -> dict[str, str]:
        when = times[row.student, row.unit]
        return semester.late_columns(policy, row.student, row.unit, when, row.score) | made

    return columns


def unawardable(course: Course, unit: str, nb_name: str) -> dict[str, float]:
    """{grade_id: points} of the notebook's test cells that cannot earn points on this machine: its
    GPU-only cells without a GPU, none on a GPU."""
    if utils.mode().is_gpu:
        return {}
    return notebooks.gpu_only_tests(notebooks.read(course.source / unit / nb_name))


def gpu_only_note(course: Course, rows: list[Row]) -> str | None:
    """Without a GPU: which GPU-only test cells every graded unit could not award (None if none)."""
    known = set(course.units())
    lost = [
        f"{unit}/{gid} ({points:g})"
        for unit in sorted({row.unit for row in rows} & known)
        for nb in course.notebooks(unit)
        for gid, points in unawardable(course, unit, nb).items()
    ]
    if not lost:
        return None
    return bilingual(
        f"没有 GPU：这些仅在 GPU 上评分的测试单元格在此得 0 分：{', '.join(lost)}；最终成绩请在 GPU 上评",
        f"no GPU: these GPU-only test cells scored 0 here: {', '.join(lost)}; grade final grades on a GPU",
    )


def main(
    submissions: str,
    timeout: float | None = None,
    jobs: int | None = None,
    course: Course = COURSE,
    sandbox: str = "auto",
    everything: bool = False,
    selection: Selection = Selection(),
    preview: bool = False,
    verbose: bool = False,
    ray: str | None = None,
) -> int:
    for warning in semester.missing_files(course):
        print(warning)
    if preview:
        rows = feedback_only(course, Path(submissions), timeout, jobs, sandbox, selection, ray)
        print_summary(rows, verbose)
        print(
            bilingual(
                f"仅反馈（另一组种子，成绩簿未改动）：{course.root / 'feedback_preview'}/<学生>/<单元>/",
                f"feedback only (other seeds, gradebook untouched): {course.root / 'feedback_preview'}/<student>/<unit>/",
            )
        )
        return 0
    rows = grade(course, Path(submissions), timeout, jobs, sandbox, everything, selection, ray)
    print_summary(rows, verbose)
    if note := gpu_only_note(course, rows):
        print(note)
    print(bilingual(f"成绩表：{course.root / 'grades.csv'}", f"grades: {course.root / 'grades.csv'}"))
    print(
        bilingual(
            f"反馈（HTML）：{course.feedback}/<学生>/<单元>/",
            f"feedback (HTML): {course.feedback}/<student>/<unit>/",
        )
    )
    print(
        bilingual(
            f"评分日志：{course.autograded / 'grading.log'}",
            f"grading log: {course.autograded / 'grading.log'}",
        )
    )
    return 0
