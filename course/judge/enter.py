"""Inside fresh namespaces (started by `unshare`, see `course.judge.sandbox`): hide, re-bind, drop rights, exec.

`python -m course.judge.enter SPEC.json`, as root of new mount, PID, IPC and network namespaces (SPEC.json, in the
working copy, is removed once read):
1. every path in "hide" gets an empty tmpfs on top, with the given mode (the course, the grader's home,
   /tmp with other graders' scratch folders, /var/tmp and /dev/shm);
2. every path in "keep" (the Python environment, the working copy's writable folders) and "read_only" (the
   working copy, the grader's bytecode) is bound back where it was, outermost first, through a file descriptor
   opened before step 1, the latter read-only;
3. a /proc of the new PID namespace replaces the old one (no other process is visible);
4. the process becomes the grading's own uid (or, when it started unprivileged, enters one more user namespace, which
   locks the mounts) and sets no-new-privileges, then executes "argv" with "env" in "cwd".
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG = 38, 1

libc = ctypes.CDLL(None, use_errno=True)


def check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def mount(source: str | None, target: str, kind: str | None, flags: int, data: str | None = None) -> None:
    encode = lambda s: s.encode() if s is not None else None  # noqa: E731
    check(libc.mount(encode(source), encode(target), encode(kind), flags, encode(data)), f"mount {target}")


def enter(spec: dict) -> None:
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    outer_first = sorted(spec["keep"] + spec["read_only"], key=lambda path: path.rstrip("/").count("/"))
    kept = {path: os.open(path, os.O_PATH | os.O_DIRECTORY) for path in outer_first}
    for path, mode in spec["hide"].items():
        mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode},size=64m")
    for path, fd in kept.items():
        os.makedirs(path, exist_ok=True)
        mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        os.close(fd)
        if path in spec["read_only"]:  # keeping the flags the host's mount has
            kept_flags = os.statvfs(path).f_flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC)
            mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | kept_flags)
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    if spec["privileged"]:
        os.setgroups([])
        os.setgid(spec["uid"])
        os.setuid(spec["uid"])
        check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")  # setuid cleared unshare's
    else:
        check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")  # mounts become locked together
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl")
    os.chdir(spec["cwd"])
    os.execve(spec["argv"][0], spec["argv"], spec["env"])


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    os.unlink(sys.argv[1])  # the host's paths it names are nothing the student's code may read
    enter(spec)
