"""nbgrader's exchange as the feedback service reads and answers it: a submission's folder read without following a
link (`intake`), its secret, its owner, and feedback pages written under nbgrader's name where its student fetches
them."""

from __future__ import annotations

import hashlib
import os
import pwd
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from course.grading import intake
from course.grading.atomic import replace_text

SECRET, TIMESTAMP = "submission_secret.txt", intake.TIMESTAMP


@dataclass(frozen=True)
class Exchange:
    """nbgrader's exchange for one course."""

    root: Path
    course_id: str

    @property
    def inbound(self) -> Path:
        return self.root / self.course_id / "inbound"

    @property
    def feedback(self) -> Path:
        return self.root / self.course_id / "feedback"


def opened(parent: Path, names: tuple[str, ...]) -> int:
    """A descriptor of `parent/names…`, each step opened without following a link (`intake.open_folder`)."""
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for depth, name in enumerate(names):
            inner = intake.open_folder(fd, name, "/".join(names[: depth + 1]))
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def submission_files(parent: Path, names: tuple[str, ...]) -> intake.Files:
    """The student's files of a submission (nbgrader's secret and time left out), read as intake reads them."""
    fd = opened(parent, names)
    try:
        for relative, contents in intake.walk(fd, "", "/".join(names) + "/"):
            if relative not in (SECRET, TIMESTAMP):
                yield relative, contents
    finally:
        os.close(fd)


def look(parent: Path, names: tuple[str, ...]) -> tuple[float, str, int, list[str]]:
    """(the newest change time, a signature of its entries, the folder's owner, its top-level names) of a
    submission folder, by `lstat` alone (nothing followed, nothing read)."""
    fd = opened(parent, names)
    try:
        own = os.fstat(fd)
        newest, listed = own.st_ctime, []

        def visit(folder: int, prefix: str) -> None:
            nonlocal newest
            for name in sorted(os.listdir(folder)):
                found = os.stat(name, dir_fd=folder, follow_symlinks=False)
                newest = max(newest, found.st_ctime)
                listed.append(f"{prefix}{name}:{found.st_size}:{found.st_mtime_ns}:{found.st_ctime_ns}")
                if len(listed) > intake.LIMITS.entries:
                    raise intake.refuse(
                        "/".join(names),
                        f"超过 {intake.LIMITS.entries} 个文件和文件夹",
                        f"more than {intake.LIMITS.entries} files and folders",
                    )
                if stat.S_ISDIR(found.st_mode) and prefix.count("/") < intake.LIMITS.depth:
                    inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=folder)
                    try:
                        visit(inner, f"{prefix}{name}/")
                    finally:
                        os.close(inner)

        visit(fd, "")
        top = sorted(os.listdir(fd))
    finally:
        os.close(fd)
    signature = hashlib.sha256("\n".join(listed).encode()).hexdigest()[:16]
    return newest, signature, own.st_uid, top


def read_secret(inbound: Path, name: str) -> str | None:
    """The submission's nbgrader secret (hex, written by `nbgrader submit`), None where there is none."""
    try:
        fd = opened(inbound, (name,))
        try:
            with intake.open_file(fd, SECRET, f"{name}/{SECRET}") as f:
                text = f.read(1025).decode("ascii")  # hashed as nbgrader reads it: whole
        finally:
            os.close(fd)
    except (OSError, intake.Refused, UnicodeDecodeError):
        return None
    return text if re.fullmatch(r"[0-9a-f]{1,1024}", text) else None


def account_of(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def notebook_names(top: list[str]) -> list[str]:
    """The notebooks a student's fetch of feedback asks for: the submission's top-level `*.ipynb`, not hidden."""
    return [name for name in top if name.endswith(".ipynb") and not name.startswith(".")]


def write_page(path: Path, text: str) -> None:
    """A feedback page replaced whole, readable by its student (mode 0644)."""
    replace_text(path, text)
    path.chmod(0o644)


def page_hash(secret: str, notebook: str) -> str:
    """nbgrader's name for a notebook's feedback in the exchange (`nbgrader.utils.notebook_hash`)."""
    return hashlib.md5((secret + notebook.removesuffix(".ipynb")).encode()).hexdigest()


def create_page(path: Path, text: str) -> None:
    """A feedback page written whole where none is: the submission's own page, once (a page already there, the
    final feedback `nbgrader release_feedback` wrote or this service before it was killed, is kept)."""
    partial = path.with_suffix(".partial")
    partial.write_text(text, encoding="utf-8")
    partial.chmod(0o644)
    try:
        os.link(partial, path)
    except FileExistsError:
        pass
    finally:
        partial.unlink()


def uid_of(student: str) -> int | None:
    try:
        return pwd.getpwnam(student).pw_uid
    except KeyError:
        return None
