"""Intake: what happens to a class's submissions before anything grades them (`course grade` often runs as root).

Each (student, unit) of an upload — a class folder, or a zip read member by member and never unpacked as a whole
— is read without following a link anywhere and written afresh into the course's `submitted/` (folders 0755,
files 0644), within `LIMITS`. A submission holding a symbolic link, a hard link, a device, FIFO or socket, an
unsafe name, a path climbing out of its folder, an unreadable file, a notebook that is not a notebook, or more
than its limits, is refused with the reason naming the path; the rest of the class is placed as usual.

A `timestamp.txt` in an upload is the student's own file: it is left out and noted. The submission time is the
instructor's: the timestamps CSV (written into the placed folder, where nbgrader reads it), or the one `nbgrader
collect` wrote when `submitted/` itself is graded in place.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TypeVar

import nbformat

from course.layout import Course
from course.neutral import visible
from utils.messages import bilingual

MiB = 2**20
TIMESTAMP = "timestamp.txt"  # nbgrader's record of when a submission was handed in
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")  # student and unit folders
CHUNK = MiB
T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    """What one submission (a student's unit) may hold. The course's notebooks are 50-80 KiB as released and a few
    MiB once run with their plots: 16 MiB leaves room for heavy outputs. A unit needs nothing but its notebooks, so
    any other file gets no more than a notebook, the whole submission two notebooks' worth, and all of one student's
    units in one upload (a semester's zip) four: a class of 300 then stays under 20 GiB however its students fill
    their upload (`disk_reserve` stops it sooner)."""

    notebook_bytes: int = 16 * MiB
    file_bytes: int = 16 * MiB
    submission_bytes: int = 32 * MiB
    student_bytes: int = 64 * MiB  # one student's submissions of one upload together
    entries: int = 1000  # files and folders
    depth: int = 16  # folders below the unit folder
    disk_reserve: int = 1024 * MiB  # free disk a submission may never eat into


# A zip member may inflate to INFLATION times its compressed size past its first INFLATION_FREE bytes. Deflate
# packs the released notebooks 2-3 times, a notebook of printed logs 5-20 times; a zip bomb packs a thousand times
# (deflate's most) or far more (bzip2, lzma): 100 refuses it after a few MiB written, from the bytes it inflates to,
# whatever its header claims, and a 40 KiB member unpacks to 5 MiB at most.
INFLATION = 100
INFLATION_FREE = MiB


LIMITS = Limits()


class Refused(Exception):
    """Why a submission is not placed (bilingual, naming the path)."""


@dataclass
class Intake:
    """One (student, unit) found in an upload, and what intake made of it."""

    student: str
    unit: str
    refused: str = ""  # why it was not placed ("" when it was)
    notes: list[str] = field(default_factory=list)  # placed, with something left out (bilingual)


# A submission's files, as any source yields them: (path relative to the unit folder, contents; None: a folder).
Files = Iterator[tuple[str, BinaryIO | None]]


@dataclass(frozen=True)
class Upload:
    """One (student, unit) of a class upload and how to read its files."""

    student: str
    unit: str
    files: Callable[[], Files]


def refuse(path: str, zh: str, en: str) -> Refused:
    """Why `path` is refused, shown inert: the path, and any part of the reason quoting the upload's bytes."""
    return Refused(visible(bilingual(f"拒收 {path}：{zh}", f"refused {path}: {en}")))


def check_folder_name(name: str, what: tuple[str, str]) -> None:
    if not SAFE_NAME.fullmatch(name):
        raise refuse(
            name,
            f"{what[0]}文件夹名只能含字母、数字和 _ . @ -（至多 64 个字符）",
            f"a {what[1]} folder name may only hold letters, digits and _ . @ - (64 characters at most)",
        )


def check_parts(relative: str, path: str, limits: Limits) -> list[str]:
    """The parts of `relative` (shown as `path`), refused when one would climb out or is unprintable."""
    parts = relative.split("/")
    for part in parts:
        if part in ("", ".", "..") or "\\" in part or "\0" in part:
            raise refuse(path, "路径含空、. 或 .. 部分", "the path has an empty, . or .. part")
        if visible(part) != part or len(part.encode("utf-8")) > 255:
            raise refuse(
                path, "文件名含不可打印字符或过长", "the name holds unprintable characters or is too long"
            )
    if len(parts) > limits.depth + 1:
        raise refuse(path, f"嵌套超过 {limits.depth} 层", f"nested deeper than {limits.depth} folders")
    return parts


# ---- reading a class folder -----------------------------------------------------------------------------


KINDS = {
    stat.S_IFLNK: ("符号链接", "a symbolic link"),
    stat.S_IFIFO: ("命名管道", "a fifo"),
    stat.S_IFSOCK: ("套接字", "a socket"),
    stat.S_IFCHR: ("设备文件", "a device"),
    stat.S_IFBLK: ("设备文件", "a device"),
}


def refuse_kind(path: str, mode: int) -> Refused:
    zh, en = KINDS.get(stat.S_IFMT(mode), ("特殊文件", "a special file"))
    return refuse(
        path,
        f"是{zh}，提交中只能有普通文件和文件夹",
        f"{en}; a submission holds plain files and folders only",
    )


def open_folder(parent: int, name: str, path: str) -> int:
    """The folder `name` in the folder open as `parent`, opened without following a link."""
    mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
    if not stat.S_ISDIR(mode):
        raise refuse_kind(path, mode)
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)


def open_file(parent: int, name: str, path: str) -> BinaryIO:
    """The plain file `name` (one name only: no hard link) in the folder open as `parent`."""
    mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
    if not stat.S_ISREG(mode):
        raise refuse_kind(path, mode)
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=parent)
    opened = os.fstat(fd)  # what was opened, should the name have changed since
    if not stat.S_ISREG(opened.st_mode) or opened.st_nlink != 1:
        os.close(fd)
        if stat.S_ISREG(opened.st_mode):
            raise refuse(path, "是硬链接（同一文件有多个名字）", "a hard link (one file under several names)")
        raise refuse_kind(path, opened.st_mode)
    return os.fdopen(fd, "rb")


def walk(folder: int, prefix: str, shown_prefix: str) -> Files:
    with os.scandir(folder) as entries:
        for entry in entries:
            relative = f"{prefix}{entry.name}"
            path = f"{shown_prefix}{relative}"
            if entry.is_dir(follow_symlinks=False):
                yield relative, None
                inner = open_folder(folder, entry.name, path)
                try:
                    yield from walk(inner, f"{relative}/", shown_prefix)
                finally:
                    os.close(inner)
            else:
                with open_file(folder, entry.name, path) as contents:
                    yield relative, contents


def folder_files(root: Path, student: str, unit: str) -> Files:
    """Every entry of `root/student/unit`, read without following a link anywhere below `root`."""
    top = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    opened = [top]
    try:
        opened.append(open_folder(top, student, student))
        opened.append(open_folder(opened[-1], unit, f"{student}/{unit}"))
        yield from walk(opened[-1], "", f"{student}/{unit}/")
    finally:
        for fd in opened:
            os.close(fd)


# ---- reading a zip ----------------------------------------------------------------------------------------


def member_files(archive: zipfile.ZipFile, members: list[tuple[str, zipfile.ZipInfo]], path: str) -> Files:
    """The members of one submission (relative name, entry), refusing any that is not a plain file or folder."""
    for relative, info in members:
        mode = info.external_attr >> 16 if info.create_system == 3 else 0
        if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise refuse_kind(f"{path}/{relative}", mode)
        if info.flag_bits & 0x1:
            raise refuse(f"{path}/{relative}", "已加密", "encrypted")
        if info.is_dir() or stat.S_ISDIR(mode):
            yield relative.rstrip("/"), None
            continue
        with archive.open(info) as contents:
            yield relative, Inflating(contents, info.compress_size, f"{path}/{relative}")


class Inflating:
    """A zip member read until it inflates past INFLATION times its compressed size (`packed`): then refused."""

    def __init__(self, contents: BinaryIO, packed: int, path: str):
        self.contents, self.left, self.path = contents, INFLATION_FREE + INFLATION * packed, path

    def read(self, size: int) -> bytes:
        chunk = self.contents.read(size)
        self.left -= len(chunk)
        if self.left < 0:
            raise refuse(
                self.path,
                f"解压后超过压缩大小的 {INFLATION} 倍（zip 炸弹？）",
                f"inflates to over {INFLATION} times its compressed size (a zip bomb?)",
            )
        return chunk


# ---- finding the submissions ----------------------------------------------------------------------------


def class_pairs(paths: list[tuple[str, ...]]) -> tuple[tuple[str, ...], list[tuple[str, str]]]:
    """(the folder wrapping the class, or (); every (student, unit) holding a notebook) from the paths of an
    upload's entries. A class may sit inside one top folder (one that is not itself a student's)."""
    tops = {p[0] for p in paths if len(p) > 1 and p[0] and not p[0].startswith((".", "__"))}
    prefix: tuple[str, ...] = ()
    if len(tops) == 1 and not any(is_notebook(p) for p in paths if p[0] in tops):
        prefix = tuple(tops)
    depth = len(prefix)
    pairs = {(p[depth], p[depth + 1]) for p in paths if p[:depth] == prefix and is_notebook(p[depth:])}
    return prefix, sorted(pairs)


def is_notebook(parts: tuple[str, ...]) -> bool:
    """`<student>/<unit>/<name>.ipynb`, none of them hidden."""
    return len(parts) == 3 and parts[2].endswith(".ipynb") and not any(p.startswith(".") for p in parts)


@contextlib.contextmanager
def class_uploads(submissions: Path) -> Iterator[list[Upload]]:
    """Every (student, unit) of a class folder or zip (a zip stays open while the uploads are read)."""
    if submissions.is_file() and zipfile.is_zipfile(submissions):
        with zipfile.ZipFile(submissions) as archive:
            yield archive_uploads(archive)
        return
    if not submissions.is_dir():
        raise ValueError(
            bilingual(
                f"找不到提交文件夹或 zip：{submissions}", f"no submissions folder or zip at {submissions}"
            )
        )
    paths = [p.relative_to(submissions).parts for p in submissions.glob("*/*/*.ipynb")]
    paths += [p.relative_to(submissions).parts for p in submissions.glob("*/*/*/*.ipynb")]
    prefix, pairs = class_pairs(paths)
    root = submissions.joinpath(*prefix)
    yield [Upload(s, u, lambda s=s, u=u: folder_files(root, s, u)) for s, u in pairs]


def archive_uploads(archive: zipfile.ZipFile) -> list[Upload]:
    """The submissions of a zip: each its members below `<student>/<unit>/`; no other member is ever read."""
    named = [(tuple(info.filename.rstrip("/").split("/")), info) for info in archive.infolist()]
    prefix, pairs = class_pairs([parts for parts, _ in named])
    members: dict[tuple[str, str], list[tuple[str, zipfile.ZipInfo]]] = {pair: [] for pair in pairs}
    depth = len(prefix)
    for parts, info in named:
        pair = parts[depth : depth + 2]
        if parts[:depth] == prefix and len(parts) > depth + 2 and pair in members:
            members[pair].append(("/".join(parts[depth + 2 :]) + ("/" if info.is_dir() else ""), info))
    return [Upload(s, u, lambda s=s, u=u: member_files(archive, members[s, u], f"{s}/{u}")) for s, u in pairs]


# ---- writing a submission -------------------------------------------------------------------------------


def make_folders(folder: Path, parts: list[str]) -> None:
    for depth in range(1, len(parts) + 1):
        path = folder.joinpath(*parts[:depth])
        if not path.is_dir():
            path.mkdir(mode=0o755)


def copy_capped(contents: BinaryIO, target: Path, cap: int) -> int:
    """Copy at most `cap` bytes into the new file `target`; the bytes copied, or cap + 1 if there were more."""
    written = 0
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as out:
        while written <= cap and (chunk := contents.read(min(CHUNK, cap + 1 - written))):
            out.write(chunk)
            written += len(chunk)
    return written


def write_files(
    files: Files, folder: Path, path: str, limits: Limits, keep_timestamp: bool, held: int = 0
) -> list[str]:
    """Write a submission's `files` into the new `folder`, within `limits` (its student's other submissions of the
    upload holding `held` bytes); the notes on what was left out."""
    budget = min(limits.submission_bytes, limits.student_bytes - held)
    folder.mkdir(mode=0o755)
    notes, entries, total = [], 0, 0
    for relative, contents in files:
        shown_path = f"{path}/{relative}"
        parts = check_parts(relative, shown_path, limits)
        entries += 1
        if entries > limits.entries:
            raise refuse(
                path, f"超过 {limits.entries} 个文件和文件夹", f"more than {limits.entries} files and folders"
            )
        if contents is None:
            make_folders(folder, parts)
            continue
        if parts == [TIMESTAMP] and not keep_timestamp:
            notes.append(timestamp_note(shown_path))
            continue
        make_folders(folder, parts[:-1])
        cap, what = (
            (limits.notebook_bytes, ("笔记本", "notebook"))
            if relative.endswith(".ipynb")
            else (limits.file_bytes, ("文件", "file"))
        )
        try:
            size = copy_capped(contents, folder.joinpath(*parts), min(cap, budget - total))
        except FileExistsError:
            raise refuse(shown_path, "重复的名字", "the same name twice") from None
        if size > cap:
            raise refuse(
                shown_path,
                f"超过单个{what[0]}的上限 {cap // MiB} MiB",
                f"over the {cap // MiB} MiB limit of one {what[1]}",
            )
        total += size
        if total > budget:
            most, together = limits.submission_bytes // MiB, limits.student_bytes // MiB
            raise refuse(
                path,
                f"超过这份提交可占的 {budget // MiB} MiB（每份提交至多 {most} MiB，一名学生在一次上传中的所有提交合计至多 "
                f"{together} MiB）",
                f"over the {budget // MiB} MiB this submission may hold (a submission {most} MiB at most, one student's "
                f"submissions of one upload {together} MiB together)",
            )
    for notebook in sorted(folder.glob("*.ipynb")):
        check_notebook(notebook, f"{path}/{notebook.name}")
    return notes


def timestamp_note(path: str) -> str:
    return bilingual(
        f"忽略 {visible(path)}：提交时间以教师的记录为准（--timestamps 或 nbgrader collect）",
        f"ignored {visible(path)}: the submission time is the instructor's record (--timestamps or nbgrader collect)",
    )


def check_notebook(path: Path, shown_path: str) -> None:
    try:
        nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
    except Exception as error:  # any way a file fails to be a notebook
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise refuse(
            shown_path, f"不是有效的笔记本（{first[:200]}）", f"not a valid notebook ({first[:200]})"
        ) from None


def check_disk(folder: Path, path: str, limits: Limits) -> None:
    if shutil.disk_usage(folder).free < limits.submission_bytes + limits.disk_reserve:
        raise refuse(path, "磁盘剩余空间不足", "too little free disk to take it")


# ---- placing --------------------------------------------------------------------------------------------


def side_folders(target: Path) -> tuple[Path, Path]:
    return target.with_name(f".{target.name}.incoming"), target.with_name(f".{target.name}.outgoing")


def replace(target: Path, fill: Callable[[Path], T]) -> T:
    """Make `target` the new folder `fill` writes (its result is returned), never leaving neither: the new
    folder is complete before the old one goes, and a swap a killed run left half-way is undone first."""
    incoming, outgoing = side_folders(target)
    if not os.path.lexists(target) and os.path.lexists(outgoing):
        outgoing.rename(target)  # killed between the two renames below: the old folder is whole
    for leftover in (incoming, outgoing):
        shutil.rmtree(leftover, ignore_errors=True)
    try:
        result = fill(incoming)
    except BaseException:
        shutil.rmtree(incoming, ignore_errors=True)
        raise
    if os.path.lexists(target):
        target.rename(outgoing)
    incoming.rename(target)
    shutil.rmtree(outgoing, ignore_errors=True)
    return result


def place(upload: Upload, submitted: Path, in_place: bool, when, limits: Limits, held: int = 0) -> list[str]:
    """Write one submission into `submitted/<student>/<unit>/` (the student's other submissions of the upload
    holding `held` bytes); the notes, or Refused."""
    path = f"{upload.student}/{upload.unit}"
    check_folder_name(upload.student, ("学生", "student"))
    check_folder_name(upload.unit, ("单元", "unit"))
    make_folders(submitted.parent, [submitted.name, upload.student])
    check_disk(submitted, path, limits)

    def fill(folder: Path) -> list[str]:
        with contextlib.closing(upload.files()) as files:
            notes = write_files(files, folder, path, limits, in_place, held)
        if when is not None:
            (folder / TIMESTAMP).write_text(when.isoformat(), encoding="utf-8")
        return notes

    try:
        return replace(submitted / upload.student / upload.unit, fill)
    except BaseException:
        with contextlib.suppress(OSError):
            (submitted / upload.student).rmdir()  # made for this submission alone
        raise


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def take_class(
    course: Course,
    submissions: Path,
    only: Callable[[str, str], bool] | None = None,
    times: dict | None = None,
    limits: Limits | None = None,
) -> list[Intake]:
    """Place every (student, unit) of the class folder or zip `submissions` into `course.submitted` (with
    `only`, those it accepts), each on its own: one refused never stops the others. `times` ({(student, unit):
    datetime}, the timestamps CSV) become the placed submissions' `timestamp.txt`."""
    limits, times = limits or LIMITS, times or {}
    in_place = submissions.resolve() == course.submitted.resolve()
    known, intakes = set(course.units()), []
    held: dict[str, int] = {}  # bytes placed of each student in this upload
    with class_uploads(submissions.resolve()) as uploads:
        for upload in uploads:
            if only is not None and not only(upload.student, upload.unit):
                continue
            intake = Intake(visible(upload.student), visible(upload.unit))
            intakes.append(intake)
            if upload.unit not in known and SAFE_NAME.fullmatch(upload.unit):
                continue  # reported as an unknown unit
            try:
                when, earlier = times.get((upload.student, upload.unit)), held.get(upload.student, 0)
                intake.notes = place(upload, course.submitted, in_place, when, limits, earlier)
                held[upload.student] = earlier + folder_bytes(course.submitted / upload.student / upload.unit)
            except Refused as error:
                intake.refused = str(error)
            except Exception as error:  # unreadable, vanished, a full disk: this submission only
                intake.refused = visible(
                    bilingual(
                        f"无法读取或复制 {intake.student}/{intake.unit}：{error}",
                        f"could not read or copy {intake.student}/{intake.unit}: {type(error).__name__}: {error}",
                    )
                )
            for line in [intake.refused, *intake.notes]:
                if line:
                    print(line)
    if not intakes:
        raise ValueError(
            bilingual(
                f"{submissions} 中没有 <学生>/<单元>/*.ipynb", f"no <student>/<unit>/*.ipynb in {submissions}"
            )
        )
    return intakes
