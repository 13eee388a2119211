"""The course folder's lock: one command at a time writes a course's gradebook (grading, hand grades, feedback,
similarity flags). Below every command that takes it."""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os

from course.layout import Course
from utils.messages import bilingual

LOCK_FILE = ".grading.lock"


@contextlib.contextmanager
def grading_lock(course: Course, command: str = "course grade"):
    """Held while a run grades the course (or `command` writes its gradebook): a second run is refused. The lock
    goes with the process holding it (flock), so a killed run's lock is taken over; the file names the holder for
    the message."""
    course.root.mkdir(parents=True, exist_ok=True)
    with (course.root / LOCK_FILE).open("a+", encoding="utf-8") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "?"
            raise ValueError(
                bilingual(
                    f"另一个课程命令正在写 {course.root}（{holder}）：请等它结束再运行",
                    f"another course command is writing {course.root} ({holder}): wait until it ends",
                )
            ) from None
        lock.truncate(0)
        lock.write(
            f"`{command}`, pid {os.getpid()} since {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}\n"
        )
        lock.flush()
        yield
