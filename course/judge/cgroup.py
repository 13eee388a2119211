"""A memory cgroup per grading: what all the processes of one grading's uid may hold in RAM together, the memory
of their memfds and tmpfs files included, which no per-process limit counts.

A grading past its share is killed by the kernel's OOM killer inside its own cgroup; the shares of the gradings
that run at once add up to their common budget, so one grading's memory (a memfd in no process's RSS, say) never
makes the OOM killer pick another's processes. Without a cgroup, the host's OOM killer may pick the judge or
another student's grading. A root grader makes the cgroups (cgroup v1's memory hierarchy, or v2 where the grader may enable the
memory controller); anywhere else there is none, and `unavailable()` says why (`course check`, the instructor
guide's threat model).
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from pathlib import Path

V1 = Path("/sys/fs/cgroup/memory")
V2 = Path("/sys/fs/cgroup")
FOLDER = "flash-course"  # below the hierarchy's root: one cgroup per grading uid
STALE_SECONDS = 2 * 86400  # a cgroup this old is left from a grading that ended (CPU limit: 6 hours)
# of the host's RAM, what all gradings together may hold (the grader and the host keep the rest)
MEMORY_SHARE = 0.75
# set by the grader's pool in its jobs' environment: how many jobs it runs on this host at once
AT_ONCE_ENV = "COURSE_GRADINGS_AT_ONCE"
# the file that bounds a cgroup's swap, by the file of its memory limit (cgroup v1, v2)
SWAP = {"memory.limit_in_bytes": "memory.memsw.limit_in_bytes", "memory.max": "memory.swap.max"}
SANDBOXES_PER_JOB = 2  # a submission's notebook kernel and its judge's children, each a grading of its own


def budget() -> int:
    """Bytes all gradings on this host may hold in RAM together: MEMORY_SHARE of its RAM, or of the memory limit
    of the cgroup the gradings' folder goes in where that is less (a container's: its OOM killer would otherwise
    pick any process in it, the judge's or another grading's)."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit in (V1 / "memory.limit_in_bytes", V2 / "memory.max"):
        with contextlib.suppress(OSError, ValueError):  # none there, or "max"
            memory = min(memory, int(limit.read_text()))
    return int(MEMORY_SHARE * memory)


def share() -> int:
    """Bytes one grading's processes may hold together: its part of `budget()` among the gradings that run at once
    (AT_ONCE_ENV jobs, SANDBOXES_PER_JOB each), so that no grading can take the memory of another."""
    return budget() // (SANDBOXES_PER_JOB * jobs_at_once())


def jobs_at_once() -> int:
    """The jobs the grader runs on this host at once (its pool says so in AT_ONCE_ENV; 1 where none does)."""
    try:
        return max(1, int(os.environ.get(AT_ONCE_ENV, "1")))
    except ValueError:
        return 1


@functools.cache
def hierarchy() -> tuple[Path, str] | None:
    """(the folder the gradings' cgroups go in, the file of their limit), making the folder, limited to `budget()`
    for all gradings together (one submission alone runs two: its kernel's and its judge's children's); None if
    no memory hierarchy here can be written."""
    controllers = V2 / "cgroup.controllers"
    if (V1 / "memory.limit_in_bytes").exists():
        folder, limit = V1 / FOLDER, "memory.limit_in_bytes"
        folder.mkdir(exist_ok=True)
    elif controllers.exists() and "memory" in controllers.read_text().split():
        (V2 / "cgroup.subtree_control").write_text("+memory")  # refused where the root holds processes
        folder, limit = V2 / FOLDER, "memory.max"
        folder.mkdir(exist_ok=True)
        (folder / "cgroup.subtree_control").write_text("+memory")
    else:
        return None
    set_limit(folder, limit, budget())  # the judge and the host keep the rest
    remove_stale(folder)
    return folder, limit


def remove_stale(folder: Path) -> None:
    """Remove the empty cgroups of gradings that ended more than STALE_SECONDS ago without `release` (a worker
    killed at its job's timeout): a cgroup with processes refuses, and no grading runs that long."""
    for group in folder.iterdir():
        if group.name.isdigit() and group.is_dir() and time.time() - group.stat().st_mtime > STALE_SECONDS:
            with contextlib.suppress(OSError):
                group.rmdir()


@functools.cache
def unavailable() -> str | None:
    """Why gradings get no memory cgroup here, or None when they do."""
    if os.geteuid() != 0:
        return "the grader is not root"
    try:
        return None if hierarchy() is not None else "no memory cgroup hierarchy"
    except OSError as error:
        return f"the memory cgroup cannot be written: {error.strerror}"


def for_grading(owner: int) -> Path | None:
    """The memory cgroup of the grading whose uid is `owner`, limited to `share()` (made on first use); None
    where `unavailable()`."""
    if unavailable() is not None:
        return None
    folder, limit = hierarchy()
    group = folder / str(owner)
    group.mkdir(exist_ok=True)
    set_limit(group, limit, share())
    return group


def set_limit(group: Path, limit: str, size: int) -> None:
    """Bound `group` to `size` bytes of RAM, and to no swap beyond them where the kernel counts swap (else, on a host
    with swap, a cgroup at its limit has its pages swapped out rather than its processes killed)."""
    swap = group / SWAP[limit]
    writes = [(group / limit, str(size))]
    if swap.exists():
        writes.append((swap, "0" if limit == "memory.max" else str(size)))  # v1 counts RAM and swap together
        if limit != "memory.max" and size > int((group / limit).read_text()):
            writes.reverse()  # v1 keeps RAM's limit at most RAM and swap's: raise that first
    for path, value in writes:
        path.write_text(value)


def joining(group: Path | None) -> list[str]:
    """A prefix of a command that moves it into `group` before it executes (nothing if None): everything it starts
    is then counted there, with no moment outside."""
    if group is None:
        return []
    return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(group / "cgroup.procs")]


def release(owner: int, wait: float = 2.0) -> None:
    """Remove the cgroup of grading `owner` once its processes are gone (they were just killed)."""
    if unavailable() is not None:
        return
    group, deadline = hierarchy()[0] / str(owner), time.monotonic() + wait
    while True:
        try:
            return group.rmdir()
        except FileNotFoundError:
            return
        except OSError:  # busy: a killed process has not exited yet
            if time.monotonic() > deadline:
                return
            time.sleep(0.02)


__all__ = ["AT_ONCE_ENV", "budget", "for_grading", "joining", "release", "share", "unavailable"]
