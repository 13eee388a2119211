"""`python -m course feedback-service`: hidden-test feedback minutes after a student submits, before the deadline.

The service watches nbgrader's exchange (`<exchange>/<course id>/inbound/`, what `nbgrader submit` and the assignment
list's Submit button write) and, where no exchange is used, a submissions folder (`<student>/<unit>/*.ipynb`). Each
new submission is graded in preview exactly as `course grade --feedback-only` grades it (`grade.feedback_only`: the
feedback salt, a scratch copy of the course, the gradebook untouched, the same sandbox), in rounds of up to `jobs`
submissions through the local pool or a Ray cluster, and its feedback goes where the student fetches it: the
exchange's `feedback/` under nbgrader's hash of the submission's secret and the notebook's name (the assignment
list's Fetch Feedback), or `feedback_preview/<student>/<unit>/` for the submissions folder.

Fair under a deadline rush: each round takes students in turn, the one served longest ago first (twenty
resubmissions of one student never hold back a classmate's first); of the submissions of one student and unit
waiting, only the latest is graded (the others are told so); a student gets at most `[feedback] per_day` gradings of
a unit a day (`semester.toml`, in the semester's zone), and each feedback says how many are left; nothing submitted
after the unit's due date (with the student's extension) is graded unless the instructor allows it (`allow_late`).

The queue lives in `<course>/feedback_service/queue/`, one JSON file per student replaced whole at each change
(`atomic.replace_text`): a submission is recorded when first seen, marked running (its grading charged to the day)
before its round, done once its feedback is written. A service killed or stopped half-way finds its running
submissions waiting again when it starts (their feedback was never written, their charge is dropped; one whose
pages were all written before the kill is done), and what it recorded done is never graded again. At its first
start, what the sources already hold is old: recorded, never graded. A page is written only where none is: the
final feedback `nbgrader release_feedback` wrote for a submission is never replaced.

What a student hands in is hostile: an inbound folder is read without following a link (`intake`), its owner must
be the account it names (or the service's own), its name must be nbgrader's; a file that is not a notebook, a
renamed notebook or an unknown unit gets a bilingual page in that student's feedback and stops nothing else.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import html
import os
import re
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from course.grading import intake, semester
from course.grading.feedback_exchange import (
    Exchange,
    account_of,
    create_page,
    look,
    notebook_names,
    page_hash,
    read_secret,
    submission_files,
    uid_of,
    write_page,
)
from course.grading.feedback_queue import (
    BEFORE,
    DONE,
    FOLDER,
    OTHERS,
    REFUSED,
    RUNNING,
    SUPERSEDED,
    WAITING,
    Entry,
    Queue,
)
from course.layout import Course
from course.neutral import visible
from utils.messages import bilingual

SETTLE_SECONDS = 2.0  # a submission whose files changed more recently may still be being written
ABANDONED_SECONDS = 60.0  # an inbound folder this old without nbgrader's secret is not a submission


@dataclass(frozen=True)
class Settings:
    """How the service grades: its sources, the pool, and what the instructor allows."""

    exchange: Exchange | None = None
    submissions: Path | None = None
    jobs: int = 1  # submissions graded in one round
    timeout: float | None = None
    sandbox: str = "auto"
    ray: str | None = None
    allow_late: bool = False


# ---- pages --------------------------------------------------------------------------------------------------


def message_page(title: tuple[str, str], lines: list[str]) -> str:
    """A feedback page of the service's own: each line (bilingual) a paragraph, everything escaped."""
    body = "\n".join(f"<p>{html.escape(line)}</p>" for line in lines)
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{html.escape(bilingual(*title))}</title></head>\n"
        f'<body>\n<div class="course-feedback-service">\n<h3>{html.escape(bilingual(*title))}</h3>\n{body}\n'
        "</div>\n</body></html>\n"
    )


PREVIEW = (
    "截止前的预览反馈：隐藏测试用的是另一组输入，这不是你的成绩",
    "feedback before the deadline: the hidden tests ran on other inputs; this is not your grade",
)
BODY = re.compile(r"<body[^>]*>", re.IGNORECASE)


def with_note(page: str, lines: list[str]) -> str:
    """The grader's feedback page with the service's lines (bilingual, escaped) at the top of its body."""
    note = "".join(f"<p>{html.escape(line)}</p>" for line in lines)
    block = f'<div class="course-feedback-service" style="border:1px solid #888;padding:0.5em">{note}</div>'
    found = BODY.search(page)
    return page[: found.end()] + block + page[found.end() :] if found else block + page


def quota_line(left: int, per_day: int) -> str:
    return bilingual(f"今天还剩 {left} 次（每天 {per_day} 次）", f"{left} of {per_day} left today")


# ---- the service ------------------------------------------------------------------------------------------


GradeRound = Callable[[Course, Path, Settings], dict]


def preview_round(course: Course, class_folder: Path, settings: Settings) -> dict:
    """{(student, unit): Row} of one round, graded by `course grade --feedback-only`'s own code."""
    from course.grading import grade

    rows = grade.feedback_only(
        course, class_folder, settings.timeout, settings.jobs, settings.sandbox, ray=settings.ray
    )
    return {(row.student, row.unit): row for row in rows}


@dataclass
class Service:
    """The queue, its sources, and one round at a time (`step`)."""

    course: Course
    settings: Settings
    grade_round: GradeRound = preview_round
    clock: Callable[[], float] = time.time
    policy: semester.Policy = field(default_factory=semester.Policy)
    policy_error: str = ""

    def __post_init__(self) -> None:
        self.queue = Queue(self.course)
        self.work = self.course.root / FOLDER / "round"
        self.passed_over: set[str] = set()  # inbound folders that are not submissions, looked at once a run
        self.policy = semester.load_policy(semester.semester_path(self.course), self.course)  # wrong: refused
        if self.queue.first:  # what the sources already hold was handed in before: only new ones are graded
            self.scan(before=True)
        for entry in self.queue.recover():
            if self.delivered(entry):  # killed after its pages were written, before it was marked done
                entry.state = DONE
                self.queue.save(entry)
                continue
            say(f"重新排队 {entry.student}/{entry.unit}", f"queued again: {entry.student}/{entry.unit}")

    # -- finding submissions --

    def scan(self, before: bool = False) -> int:
        """Record every new submission that has settled (`before`: as handed in before the service started);
        how many are still being written."""
        unsettled, new = 0, []
        for found in self.found():
            if found is None:
                unsettled += 1
            elif found.key not in self.queue.entries:
                found.state = BEFORE if before else found.state
                self.queue.add(found)
                new.append(found)
        self.queue.save(*new)
        for entry in new:
            if entry.state == REFUSED:
                self.deliver_message(entry)
        return unsettled

    def found(self) -> Iterator[Entry | None]:
        """Each submission in the sources (None: one still being written)."""
        exchange, folder = self.settings.exchange, self.settings.submissions
        if exchange is not None and exchange.inbound.is_dir():
            for name in sorted(os.listdir(exchange.inbound)):
                if f"exchange:{name}" in self.queue.entries or name in self.passed_over:
                    continue
                try:
                    yield self.exchange_entry(exchange, name)
                except (OSError, intake.Refused):  # a link, a file, unreadable, no secret: not a submission
                    self.passed_over.add(name)
        if folder is not None and folder.is_dir():
            for student in sorted(os.listdir(folder)):
                with contextlib.suppress(OSError, intake.Refused):
                    for unit in sorted(os.listdir(folder / student)):
                        with contextlib.suppress(OSError, intake.Refused):
                            yield self.folder_entry(folder, student, unit)

    def exchange_entry(self, exchange: Exchange, name: str) -> Entry | None:
        newest, _, owner, _ = look(exchange.inbound, (name,))
        now = self.clock()
        if now - newest < SETTLE_SECONDS:
            return None
        if read_secret(exchange.inbound, name) is None:  # nbgrader writes it last: not handed in yet
            if now - newest < ABANDONED_SECONDS:
                return None
            raise intake.Refused(name)  # not nbgrader's, nowhere to answer: passed over
        parts = name.split("+")
        student, unit = (parts[0], parts[1]) if len(parts) in (3, 4) else (name, "")
        entry = Entry(f"exchange:{name}", student, unit, newest, now)
        if len(parts) not in (3, 4) or not intake.SAFE_NAME.fullmatch(student):
            self.refuse(
                entry, ("不是 nbgrader 命名的提交", f"not a submission nbgrader named ({visible(name)})")
            )
        elif owner not in (os.getuid(), uid_of(student)):
            entry.student = OTHERS  # charged to no one: the student it names did not hand it in
            self.refuse(
                entry,
                (
                    f"这份提交用 {student} 的名字交来，却属于另一个账户（{account_of(owner)}）：不评分",
                    f"handed in under {student}'s name by another account ({account_of(owner)}): not graded",
                ),
            )
        else:
            self.check_unit(entry)
        return entry

    def folder_entry(self, folder: Path, student: str, unit: str) -> Entry | None:
        newest, signature, _, _ = look(folder, (student, unit))
        key = f"folder:{student}/{unit}/{signature}"
        if key in self.queue.entries:
            return self.queue.entries[key]
        now = self.clock()
        if now - newest < SETTLE_SECONDS:
            return None
        entry = Entry(key, student, unit, newest, now)
        if not (intake.SAFE_NAME.fullmatch(student) and intake.SAFE_NAME.fullmatch(unit)):
            self.refuse(entry, ("文件夹名不安全", "an unsafe folder name"))
        else:
            self.check_unit(entry)
        return entry

    def check_unit(self, entry: Entry) -> None:
        units = self.course.units()
        if entry.unit not in units:
            self.refuse(
                entry,
                (
                    f"未知单元 {visible(entry.unit)}；本课程的单元：{', '.join(units)}",
                    f"unknown unit {visible(entry.unit)}; the course's units are {', '.join(units)}",
                ),
            )

    @staticmethod
    def refuse(entry: Entry, why: tuple[str, str]) -> None:
        entry.state, entry.message = REFUSED, bilingual(*why)

    # -- one round --

    def step(self) -> tuple[bool, bool]:
        """Scan, then grade one round: (whether it graded, whether anything waits or is being written)."""
        self.reload_policy()
        unsettled = self.scan()
        chosen = self.choose()
        if chosen:
            try:
                self.grade(chosen)
            except BaseException:  # stopped, or the grading itself failed: graded again at the next start
                self.queue.recover()
                raise
        waiting = any(e.state == WAITING for e in self.queue.entries.values())
        return bool(chosen), bool(waiting or unsettled)

    def reload_policy(self) -> None:
        """The semester's settings as they are now (an extension granted today counts); a broken file keeps the
        last good ones and says why."""
        try:
            self.policy = semester.load_policy(semester.semester_path(self.course), self.course)
            self.policy_error = ""
        except ValueError as error:
            if str(error) != self.policy_error:
                print(error, flush=True)
            self.policy_error = str(error)

    def today(self) -> str:
        return dt.datetime.fromtimestamp(self.clock(), self.policy.zone).date().isoformat()

    def shown_time(self, seconds: float) -> str:
        return dt.datetime.fromtimestamp(seconds, self.policy.zone).isoformat(timespec="minutes")

    def choose(self) -> list[Entry]:
        """This round's submissions: the latest waiting of each student's unit, students in turn (the one served
        longest ago first); the older ones superseded, the late and the over-quota refused, each told why."""
        live = [e for e in self.queue.entries.values() if e.state in (WAITING, RUNNING, DONE)]
        newest = {(e.student, e.unit): e for e in sorted(live, key=lambda e: (e.when, e.seen, e.key))}
        served: dict[str, float] = {}
        for entry in self.queue.entries.values():
            served[entry.student] = max(served.get(entry.student, 0.0), entry.started)
        by_student: dict[str, list[Entry]] = {}
        charged, told = self.queue.charged(), []
        for entry in sorted(live, key=lambda e: (e.seen, e.key)):
            if entry.state != WAITING:
                continue
            if newest[entry.student, entry.unit] is not entry:
                self.supersede(entry, newest[entry.student, entry.unit])
                told.append(entry)
            elif self.allowed(entry, charged):
                by_student.setdefault(entry.student, []).append(entry)
            else:
                told.append(entry)
        self.queue.save(*told)
        for entry in told:
            if entry.state == REFUSED or entry.key.startswith("exchange:"):  # a folder holds the latest alone
                self.deliver_message(entry)
        order = sorted(by_student, key=lambda s: (served.get(s, 0.0), by_student[s][0].seen))
        chosen: list[Entry] = []
        while len(chosen) < self.settings.jobs and any(by_student.values()):
            for student in order:
                if by_student[student] and len(chosen) < self.settings.jobs:
                    chosen.append(by_student[student].pop(0))
        now, day = self.clock(), self.today()
        for entry in chosen:
            entry.state, entry.day, entry.started = RUNNING, day, now
        self.queue.save(*chosen)
        return chosen

    def supersede(self, older: Entry, newer: Entry) -> None:
        older.state = SUPERSEDED
        older.message = bilingual(
            f"这份提交之后你又提交了（{self.shown_time(newer.when)}）：只评最新的一份，反馈在那份提交下",
            f"you handed in again after this one (at {self.shown_time(newer.when)}): only the latest is graded, "
            "its feedback is under that submission",
        )

    def allowed(self, entry: Entry, charged: Counter) -> bool:
        """Whether the entry may be graded now: before its due date (or late work allowed), within its quota."""
        due = self.policy.due_for(entry.student, entry.unit)
        if due is not None and not self.settings.allow_late:
            if dt.datetime.fromtimestamp(entry.when, dt.UTC) > due + self.policy.grace:
                shown = due.astimezone(self.policy.zone).isoformat(timespec="minutes")
                self.refuse(
                    entry,
                    (
                        f"{entry.unit} 的截止时间（{shown}）已过：截止后不再给预览反馈，最终评分照常",
                        f"the due date of {entry.unit} ({shown}) has passed: no feedback after it; final grading "
                        "goes on as usual",
                    ),
                )
        per_day, day = self.policy.feedback_per_day, self.today()
        if entry.state == WAITING and charged[entry.student, entry.unit, day] >= per_day:
            self.refuse(
                entry,
                (
                    f"今天（{day}）{entry.unit} 的 {per_day} 次预览反馈已用完：明天再提交；这份提交仍算作最终提交",
                    f"you have used today's {per_day} feedback gradings of {entry.unit} ({day}): hand in again "
                    "tomorrow; this submission still counts for final grading",
                ),
            )
        return entry.state != REFUSED

    def grade(self, chosen: list[Entry]) -> None:
        """Stage the chosen submissions (read as intake reads them), grade them in one preview round, deliver."""
        shutil.rmtree(self.work, ignore_errors=True)
        class_folder = self.work / "class"
        class_folder.mkdir(parents=True)
        staged = [entry for entry in chosen if self.stage(entry, class_folder)]
        began = time.monotonic()
        rows = self.grade_round(self.course, class_folder, self.settings) if staged else {}
        for entry in staged:
            row = rows.get((entry.student, entry.unit))
            self.deliver_graded(entry, row)
            entry.state = DONE
            self.queue.save(entry)
            status = row.status if row is not None else "error"
            say(
                f"已反馈 {entry.student}/{entry.unit}（{status}，本轮 {time.monotonic() - began:.0f} 秒）",
                f"feedback given: {entry.student}/{entry.unit} ({status}, round {time.monotonic() - began:.0f} s)",
            )
        shutil.rmtree(self.work, ignore_errors=True)

    def stage(self, entry: Entry, class_folder: Path) -> bool:
        """Copy the submission into the round's class folder; False (and the student told why) when it is
        refused: unreadable, not a notebook, over a limit, or none of its notebooks the unit's."""
        root = self.source_root(entry)
        upload = intake.Upload(entry.student, entry.unit, lambda: submission_files(root, entry.folder))
        try:
            intake.place(upload, class_folder, False, None, intake.LIMITS)
        except intake.Refused as error:
            entry.message = str(error)
        except OSError as error:
            entry.message = bilingual(
                f"无法读取这份提交：{error}", f"could not read this submission: {error}"
            )
        else:
            placed = {p.name for p in (class_folder / entry.student / entry.unit).glob("*.ipynb")}
            if placed & set(self.course.notebooks(entry.unit)):
                return True
            shutil.rmtree(class_folder / entry.student / entry.unit)
            entry.message = (
                self.renamed(entry, sorted(placed))
                if placed
                else bilingual("提交中没有笔记本", "the submission holds no notebook")
            )
        entry.state = REFUSED
        self.queue.save(entry)
        self.deliver_message(entry)
        return False

    def renamed(self, entry: Entry, names: list[str]) -> str:
        expected = ", ".join(self.course.notebooks(entry.unit))
        shown = ", ".join(visible(name) for name in names)
        return bilingual(
            f"{shown} 不是单元 {entry.unit} 的笔记本（它的笔记本：{expected}）：保留发布时的文件名再提交",
            f"{shown}: not a notebook of {entry.unit} (its notebooks: {expected}); keep the released file name "
            "and hand in again",
        )

    def source_root(self, entry: Entry) -> Path:
        if entry.key.startswith("exchange:"):
            return self.settings.exchange.inbound
        return self.settings.submissions

    # -- delivering feedback --

    def delivered(self, entry: Entry) -> bool:
        """Whether every notebook of an exchange submission has its page in the feedback folder."""
        if not entry.key.startswith("exchange:"):
            return False
        try:
            _, _, _, top = look(self.settings.exchange.inbound, entry.folder)
        except (OSError, intake.Refused):
            return False
        secret, names = read_secret(self.settings.exchange.inbound, entry.folder[0]), notebook_names(top)
        return bool(secret and names) and all(
            (self.settings.exchange.feedback / f"{page_hash(secret, name)}.html").exists() for name in names
        )

    def deliver_message(self, entry: Entry) -> None:
        """The entry's message as the feedback of each notebook it holds."""
        title = ("预览反馈未生成", "no feedback for this submission")
        page = message_page(title, [entry.message])
        self.deliver(entry, lambda name: page, replace_all=True)

    def deliver_graded(self, entry: Entry, row) -> None:
        """The preview's feedback of each notebook, with the preview and quota note; a page saying why for a
        notebook that is not the unit's or whose grading did not finish."""
        from course.grading import grade

        per_day = self.policy.feedback_per_day
        note = [
            bilingual(*PREVIEW),
            quota_line(per_day - self.queue.charged()[entry.student, entry.unit, entry.day], per_day),
        ]
        preview = self.course.root / "feedback_preview" / entry.student / entry.unit
        expected = set(self.course.notebooks(entry.unit))

        def page(name: str) -> str:
            made = preview / f"{name.removesuffix('.ipynb')}.html"
            if name in expected and made.is_file() and row is not None and name not in row.problems:
                return with_note(made.read_text(encoding="utf-8"), note)
            if name not in expected:
                lines = [self.renamed(entry, [name])]
            else:
                status = row.problems.get(name, "error") if row is not None else "error"
                lines = [
                    bilingual(
                        f"{name}：评分未完成（{grade.STATUS_ZH.get(status, status)}）：检查它能从头到尾运行",
                        f"{name}: grading did not finish ({status}): check that it runs top to bottom",
                    )
                ]
            return message_page(("预览反馈", "feedback before the deadline"), note + lines)

        self.deliver(entry, page)

    def deliver(self, entry: Entry, page: Callable[[str], str], replace_all: bool = False) -> None:
        """Write `page(notebook name)` for each notebook the submission holds where its student fetches it: the
        exchange's feedback folder under nbgrader's hash, else `feedback_preview/<student>/<unit>/` (with
        `replace_all`, the pages replace what was there)."""
        try:
            _, _, _, top = look(self.source_root(entry), entry.folder)
        except (OSError, intake.Refused):
            return  # gone or not a folder: nowhere to answer
        names = notebook_names(top)
        if entry.key.startswith("exchange:"):
            secret = read_secret(self.settings.exchange.inbound, entry.folder[0])
            if secret is None:
                return
            folder = self.settings.exchange.feedback
            folder.mkdir(
                mode=0o711, parents=True, exist_ok=True
            )  # as release_feedback makes it: not listable
            for name in names:
                create_page(folder / f"{page_hash(secret, name)}.html", page(name))
            return
        if not (intake.SAFE_NAME.fullmatch(entry.student) and intake.SAFE_NAME.fullmatch(entry.unit)):
            return
        target = self.course.root / "feedback_preview" / entry.student / entry.unit
        target.mkdir(parents=True, exist_ok=True)
        if replace_all:
            for old in target.glob("*.html"):
                old.unlink()
        for name in names:
            if visible(name) == name:
                write_page(target / f"{name.removesuffix('.ipynb')}.html", page(name))


def say(zh: str, en: str) -> None:
    print(f"[{dt.datetime.now().isoformat(timespec='seconds')}] " + bilingual(zh, en), flush=True)


def run(service: Service, once: bool = False, poll: float = 2.0) -> int:
    """Rounds until stopped (Ctrl-C, SIGTERM); with `once`, until nothing waits or is being written. One service
    at a time serves a course (a lock, gone with its process)."""
    with (service.course.root / FOLDER / ".lock").open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(
                bilingual(
                    f"另一个反馈服务已在为 {service.course.root} 服务",
                    f"another feedback service serves {service.course.root}",
                )
            ) from None
        while True:
            graded, pending = service.step()
            if once and not pending:
                return 0
            if not graded:
                time.sleep(poll)
