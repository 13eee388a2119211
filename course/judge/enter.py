"""Inside fresh namespaces (started by `unshare`, see `course.judge.sandbox`): build a new root, drop rights, exec.

`python -m course.judge.enter SPEC.json`, as root of new mount, PID, IPC and network namespaces (SPEC.json, in the
working copy, is removed once read):
1. every host path the new root binds ("root": `sandbox.allow_list`, the same as bubblewrap's) is opened first;
2. an empty tmpfs at "mount_point" becomes the new root: the system's programs and libraries, the Python environment
   and the working copy bound read-only (keeping the flags the host's mount has), its writable folders writable, a
   /proc of the new PID namespace, a /dev of a few devices, a private /tmp and /dev/shm; nothing else of the host;
3. the process moves into it (`pivot_root`), lets the old root go and makes the new one read-only;
4. it becomes the grading's own uid (or, when it started unprivileged, enters one more user namespace, which
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
MNT_DETACH = 2
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG = 38, 1
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}  # the system call's number
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")  # what bwrap's --dev holds
DEVICE_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1"}
DEVICE_LINKS |= {"stderr": "/proc/self/fd/2"}

libc = ctypes.CDLL(None, use_errno=True)


def check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def mount(source: str | None, target: str, kind: str | None, flags: int, data: str | None = None) -> None:
    encode = lambda s: s.encode() if s is not None else None  # noqa: E731
    check(libc.mount(encode(source), encode(target), encode(kind), flags, encode(data)), f"mount {target}")


def bind(source: str, target: str, read_only: bool) -> None:
    """Bind `source` (a path, or /proc/self/fd/N) at `target`, made first as a folder or an empty file."""
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    mount(source, target, None, MS_BIND | MS_REC)
    if read_only:  # keeping the flags the host's mount has (a user namespace may not drop them)
        kept = os.statvfs(target).f_flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC)
        mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | kept)


def filesystem(kind: str, target: str, tmpfs_bytes: int) -> None:
    """A filesystem of its own at `target`: "proc", "dev" (a tmpfs of a few devices bound from the host, made
    read-only by `build_root`) or "tmpfs"."""
    os.makedirs(target, exist_ok=True)
    if kind == "proc":
        mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    elif kind == "dev":
        mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=1m")
        for name in DEVICES:
            if os.path.exists(f"/dev/{name}"):
                bind(f"/dev/{name}", f"{target}/{name}", read_only=False)
        for name, link in DEVICE_LINKS.items():
            os.symlink(link, f"{target}/{name}")
        os.mkdir(f"{target}/shm")  # for the private /dev/shm, mounted next
    else:
        mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={tmpfs_bytes}")


def build_root(spec: dict) -> None:
    """Make the allow-list root at spec["mount_point"] and move into it."""
    opened = [  # in the order of the list: a path may come twice (/usr, a system folder and Python's prefix)
        os.open(source, os.O_PATH) if kind in ("ro", "rw", "device") else None
        for kind, source, _ in spec["root"]
    ]
    new = spec["mount_point"].rstrip("/")
    mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=16m")
    for (kind, source, target), fd in zip(spec["root"], opened, strict=True):
        if kind == "symlink":
            os.makedirs(os.path.dirname(new + target), exist_ok=True)
            os.symlink(source, new + target)
        elif kind in ("proc", "dev", "tmpfs"):
            filesystem(kind, new + target, spec["tmpfs_bytes"])
        else:
            bind(f"/proc/self/fd/{fd}", new + target, read_only=kind == "ro")
            os.close(fd)
    for kind, _, target in spec["root"]:  # read-only once the GPU's devices are bound into it
        if kind == "dev":
            mount(None, new + target, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC)
    os.chdir(new)
    check(libc.syscall(PIVOT_ROOT[os.uname().machine], b".", b"."), "pivot_root")
    check(libc.umount2(b".", MNT_DETACH), "umount the old root")
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def enter(spec: dict) -> None:
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    build_root(spec)
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
