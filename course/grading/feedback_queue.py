"""The feedback service's queue: every submission it has seen and what became of it, one JSON file per student in
`<course>/feedback_service/queue/`, replaced whole at each change, so a killed service loses nothing and grades
nothing twice."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from dataclasses import dataclass

from course.grading import intake
from course.grading.atomic import replace_text
from course.layout import Course

FOLDER = "feedback_service"
OTHERS = "_others"  # the queue file of submissions whose name is not a student's (never a safe student name)
WAITING, RUNNING, DONE, SUPERSEDED, REFUSED = "waiting", "running", "done", "superseded", "refused"
BEFORE = "before"  # handed in before the service first started here: not new, never graded


@dataclass
class Entry:
    """One submission the service has seen, and what became of it."""

    key: str  # "exchange:<inbound folder>" or "folder:<student>/<unit>/<signature>"
    student: str
    unit: str
    when: float  # its time: the newest change of its files (epoch seconds; a student cannot set it back)
    seen: float  # when the service first saw it
    state: str = WAITING
    day: str = ""  # the day (semester zone) its grading was charged to
    started: float = 0.0  # when its round began
    message: str = ""  # why it was refused or superseded (bilingual)

    @property
    def queue_file(self) -> str:
        return self.student if intake.SAFE_NAME.fullmatch(self.student) else OTHERS

    @property
    def folder(self) -> tuple[str, ...]:
        """Its folder's path below its source's root, by names."""
        kind, rest = self.key.split(":", 1)
        return (rest,) if kind == "exchange" else tuple(rest.split("/")[:2])


class Queue:
    """Every submission seen, by key, kept in one file per student (`first`: the service's first start here)."""

    def __init__(self, course: Course):
        self.folder = course.root / FOLDER / "queue"
        self.first = not self.folder.is_dir()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.entries: dict[str, Entry] = {}
        self.files: dict[str, dict[str, Entry]] = {}
        for path in sorted(self.folder.glob("*.json")):
            for record in json.loads(path.read_text(encoding="utf-8")):
                self.add(Entry(**record))

    def add(self, entry: Entry) -> None:
        """Keep the entry (saved by `save`)."""
        self.entries[entry.key] = entry
        self.files.setdefault(entry.queue_file, {})[entry.key] = entry

    def save(self, *touched: Entry) -> None:
        """Write the files of the touched entries' students, each replaced whole."""
        for name in sorted({entry.queue_file for entry in touched}):
            mine = [dataclasses.asdict(e) for e in self.files[name].values()]
            replace_text(self.folder / f"{name}.json", json.dumps(mine, ensure_ascii=False, indent=0))

    def recover(self) -> list[Entry]:
        """Submissions a stopped or killed service left running: waiting again, their charge dropped."""
        interrupted = [e for e in self.entries.values() if e.state == RUNNING]
        for entry in interrupted:
            entry.state, entry.day, entry.started = WAITING, "", 0.0
        self.save(*interrupted)
        return interrupted

    def charged(self) -> Counter[tuple[str, str, str]]:
        """{(student, unit, day): gradings charged to that day}."""
        return Counter(
            (e.student, e.unit, e.day) for e in self.entries.values() if e.state in (RUNNING, DONE)
        )
