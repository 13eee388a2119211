"""Where a student's code runs while it is judged: a fresh root that holds only what a student has.

Mechanisms, best first (every grade names the one used; `choose("auto")` takes the first or refuses, the fallback
only when the instructor names it: `--allow-weaker-sandbox`, `choose(ALLOW_WEAKER)`):
- "bubblewrap" (an allow-list, `bwrap`): a new root holding only the system's programs and libraries (/usr and
  its links, a few files of /etc), the Python environment read-only, the working copy, and a private /tmp and
  /dev/shm; new user, mount, PID, IPC, network, UTS and cgroup namespaces. On the host the sandbox runs as a uid
  of its own (a fresh one per grading when the grader is root) under resource limits (`prlimit`).
- "namespaces" (weaker, util-linux `unshare` + `course.judge.enter`; only where the instructor names it): the same
  allow-list root (`allow_list`), built by the launcher itself; new mount, PID, IPC and network namespaces (no UTS or
  cgroup one, and the student's process is the PID namespace's pid 1), the same uid and limits as above.
- "none": the command runs directly; only when the instructor asks for it (`--no-sandbox`).
The writable folders of a working copy belong to the sandbox's uid (mode 0700); nothing is world-writable.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from course import ROOT
from course.judge import bytecode, cgroup, tables, triton_reference
from course.judge.environment import inside, outermost, outside_pythonpath, python_paths
from utils.judged.triton_cache import MANAGER, REFERENCE_ENV
from utils.messages import bilingual

MECHANISMS = ("bubblewrap", "namespaces", "none")
ALLOW_WEAKER = "allow-weaker"  # a request: bubblewrap where it works, else the weaker fallback
# "1" in the environment: the instructor allows the fallback for every command, as --allow-weaker-sandbox does
ALLOW_WEAKER_ENV = "FLASH_COURSE_ALLOW_WEAKER_SANDBOX"
PASSED_ENV = (
    "TRITON_INTERPRET",
    "FLASH_COURSE_DEVICE",
    "OMP_NUM_THREADS",
    "CUDA_VISIBLE_DEVICES",
    "LD_LIBRARY_PATH",
    "LANG",
    "LC_ALL",
)
WRITABLE = ("home", "out", "ipc")  # the working copy's folders the student's code may write
UID_BASE, UID_RANGE = 1_000_000_000, 1 << 24  # a grading's uid on the host, when the grader is root
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime")
GPU_DEVICES = "/dev/nvidia*"
GPU_SYS = ("/sys/bus/pci", "/sys/dev/char", "/sys/devices/system", "/sys/devices/pci*", "/sys/module/nvidia*")
TMPFS_BYTES = 1 << 30  # a private /tmp or /dev/shm, a working copy where the grader mounts one
WORKSPACE_FS = "flash-course-work"  # the source name of the working copies' filesystems
WORKSPACE_FILES = 1 << 16  # files and folders a working copy's filesystem holds (the grader walks them)
DISK_QUOTA = 4 << 30  # bytes a working copy may hold on the host's disk (its writable folders)
QUOTA_POLL = 2.0  # seconds between two looks at a working copy's size while its sandbox runs
LIMITS = {  # prlimit's names: bytes of one file, open files, processes and threads of the uid, CPU seconds
    "fsize": 4 << 30,
    "nofile": 4096,
    "nproc": 2048,
    "cpu": 6 * 3600,
    "core": 0,
}


def temp_folder() -> Path:
    return Path(tempfile.gettempdir()).resolve()


def child_env(
    workdir: Path,
    home: Path,
    triton_cache: Path | None = None,
    compiled: Path | None = None,
    reference: Path | None = None,
) -> dict[str, str]:
    """A small environment: no secrets of the grader's, the student utils first on the path; Triton's cache in
    `triton_cache` when given (shared by one student's processes), else in the home folder, over the course's own
    kernels in `reference` when given (`readable_reference`); the environment's bytecode read from `compiled` when
    given (`readable_bytecode`)."""
    env = {key: os.environ[key] for key in PASSED_ENV if key in os.environ}
    env.update(
        PATH=os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        HOME=str(home),
        USER="student",  # getpass.getuser() (torch, Triton) without a passwd entry for the sandbox's uid
        LOGNAME="student",
        TMPDIR="/tmp",
        PYTHONPATH=os.pathsep.join([str(workdir), *outside_pythonpath()]),
        PYTHONNOUSERSITE="1",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONUNBUFFERED="1",
        TRITON_CACHE_DIR=str(triton_cache or home / ".triton"),
        MPLCONFIGDIR=str(home / ".matplotlib"),
        TQDM_DISABLE="1",
    )
    if compiled is not None:
        env["PYTHONPYCACHEPREFIX"] = str(compiled)
    if reference is not None:  # read before the cache above (`utils.judged.triton_cache`)
        env.update({REFERENCE_ENV: str(reference), "TRITON_CACHE_MANAGER": MANAGER})
    return env


def readable_bytecode(mechanism: str) -> Path | None:
    """The grader's bytecode folder (`course.judge.bytecode`), where a sandbox of `mechanism` reads it and cannot
    write it: bubblewrap mounts it read-only; the fallback keeps it only for a uid of the sandbox's own."""
    return bytecode.in_use() if read_only_for(mechanism) else None


def readable_reference(mechanism: str) -> Path | None:
    """The grader's cache of the course's own Triton kernels (`course.judge.triton_reference`), where a sandbox of
    `mechanism` reads it and cannot write it (as `readable_bytecode`)."""
    return triton_reference.in_use() if read_only_for(mechanism) else None


def read_only_for(mechanism: str) -> bool:
    """Whether a sandbox of `mechanism` cannot write a folder of the grader's it sees through a read-only mount: not
    the fallback started by a grader that is not root (the sandbox is that uid, root of its own user namespace)."""
    return not (mechanism == "namespaces" and os.geteuid() != 0)


def bytecode_mirrors(compiled: Path | None) -> list[Path]:
    """The folders of `compiled` a sandbox sees: the bytecode of the environment's sources (the sandbox sees them
    too), never the rest (what the grader's own processes compiled: the course, a private overlay's hidden cases)
    nor the folder's lock."""
    if compiled is None:
        return []
    found = [compiled / path.relative_to(path.anchor) for path in outermost(python_paths())]
    return [path for path in found if path.is_dir()]


def new_owner() -> int:
    """The host uid of one grading's sandboxes: a fresh unprivileged uid when the grader is root (no other
    student's files or processes share it), else the grader's own."""
    return UID_BASE + secrets.randbelow(UID_RANGE) if os.geteuid() == 0 else os.getuid()


def private_folder(path: Path, owner: int) -> Path:
    """`path` made a folder only `owner` (and the grader) may enter and write."""
    path.mkdir(mode=0o700, exist_ok=True)
    if os.geteuid() == 0:
        os.chown(path, owner, owner)
    path.chmod(0o700)
    return path


def shared_folder(prefix: str, owner: int) -> Path:
    """A folder that several sandboxed processes of one grading write (e.g. their Triton cache), on a filesystem of
    its own where the grader may mount one, as a working copy (`bounded`); `remove_workspace` removes it."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    bounded(folder)
    return private_folder(folder, owner)


def workspace(prefix: str = "course-judge-", owner: int | None = None) -> Path:
    """A fresh working copy: the student-facing `utils` (read-only for the child) and private writable `home` and
    `out`, owned by `owner` (default: a new one), on a filesystem of its own where the grader may mount one
    (`bounded`); `remove_workspace` removes it."""
    owner = new_owner() if owner is None else owner
    work = Path(tempfile.mkdtemp(prefix=prefix))
    bounded(work)
    shutil.copytree(ROOT / "utils", work / "utils", ignore=shutil.ignore_patterns("__pycache__"))
    for folder in ("home", "out"):
        private_folder(work / folder, owner)
    (work / "passwd").write_text(f"student:x:{owner}:{owner}::{work / 'home'}:/bin/sh\n")
    work.chmod(0o755)
    return work


def bounded(work: Path) -> bool:
    """Mount a tmpfs of TMPFS_BYTES on `work` (a root grader): all a working copy may hold, the child's log
    included, in at most WORKSPACE_FILES files, and its pages count in the grading's memory cgroup; False where
    mounting is refused (a container without the right), and the working copy stays on the host's disk, bounded by
    `QuotaWatch` alone."""
    if os.geteuid() != 0 or sys.platform != "linux":
        return False
    options = f"size={TMPFS_BYTES},nr_inodes={WORKSPACE_FILES},mode=0755,nosuid,nodev"
    argv = [tool("mount"), "-t", "tmpfs", "-o", options, WORKSPACE_FS, str(work)]
    return subprocess.run(argv, capture_output=True).returncode == 0


@functools.cache
def workspaces_bounded() -> bool:
    """Whether working copies here get a filesystem of their own (`bounded`)."""
    folder = Path(tempfile.mkdtemp(prefix="course-probe-"))
    try:
        return bounded(folder)
    finally:
        remove_workspace(folder)


def remove_workspace(work: Path) -> None:
    """Remove a working copy, and the filesystem it is on: its files first (a file still open keeps only itself
    in memory once its filesystem is detached), then the filesystem, then its mount point."""
    shutil.rmtree(work, ignore_errors=True)
    unmount_under(work)
    with contextlib.suppress(OSError):
        work.rmdir()


def unmount_under(folder: Path) -> None:
    """Unmount the working copies' filesystems at or below `folder` (a job's folder whose worker was killed)."""
    try:
        table = Path("/proc/self/mountinfo").read_bytes()
    except OSError:
        return
    inside = os.fsencode(folder.resolve()).rstrip(b"/") + b"/"
    for line in table.splitlines():
        before, _, after = line.partition(b" - ")
        point = unescaped(before.split()[4])
        if after.split()[1:2] == [WORKSPACE_FS.encode()] and (point + b"/").startswith(inside):
            subprocess.run([tool("umount"), "--lazy", point], capture_output=True)


def unescaped(field: bytes) -> bytes:
    """A path as /proc/self/mountinfo writes it: its space, tab, newline and backslash as octal escapes (\\040),
    any other byte as it is (a name need not be UTF-8)."""
    return re.sub(rb"\\([0-7]{3})", lambda found: bytes([int(found[1], 8)]), field)


def owner_of(workdir: Path) -> int:
    return (workdir / "home").stat().st_uid


def limits_argv() -> list[str]:
    """`prlimit` in front of a command: its resource limits. The address space is bounded on a CPU only (CUDA
    reserves far more than it uses); processes only where the sandbox has a uid of its own."""
    limits = tables.fitted(LIMITS)  # as the host's file and pid tables allow the job (`course.judge.tables`)
    if os.geteuid() != 0:
        del limits["nproc"]  # counted over the grader's own processes
    if not gpu_devices():
        limits["as"] = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    return [tool("prlimit"), *(f"--{name}={value}" for name, value in limits.items()), "--"]


def tool(name: str) -> str:
    """The full path of a sandbox tool on the grader's PATH (the child's own PATH is a short, fixed one)."""
    return shutil.which(name) or name


def gpu_devices() -> list[Path]:
    return sorted(Path("/dev").glob(GPU_DEVICES.removeprefix("/dev/")))


def gpu_sys() -> list[str]:
    """The parts of /sys the CUDA driver reads (the PCI devices, the CPUs and NUMA nodes, the driver's module),
    not the rest: /sys/class/net names the host's network interfaces, /sys/fs the host's cgroups."""
    return [str(path) for pattern in GPU_SYS for path in sorted(Path("/").glob(pattern.removeprefix("/")))]


BWRAP_MOUNTS = {"symlink": "--symlink", "ro": "--ro-bind", "rw": "--bind", "device": "--dev-bind"}
BWRAP_FILESYSTEMS = {"proc": "--proc", "dev": "--dev", "tmpfs": "--tmpfs"}
TMPFS_OPTIONS = (
    "--perms",
    "1777",
    "--size",
    str(TMPFS_BYTES),
)  # bwrap's options of a private /tmp or /dev/shm


class Root:
    """bwrap's options that build a new root, each mount point's missing folders made readable (bwrap would make
    them 0700, owned by root)."""

    def __init__(self):
        self.argv: list[str] = []
        self.mounted: list[Path] = []  # what lies under these exists already
        self.folders: set[Path] = set()

    def folders_to(self, target: Path) -> None:
        for folder in reversed(target.parents[:-1]):  # all but "/"
            if folder not in self.folders and not any(inside(folder, m) for m in self.mounted):
                self.argv += ["--perms", "0755", "--dir", str(folder)]
                self.folders.add(folder)

    def mount(self, option: str, source: str | Path, target: str | Path | None = None) -> None:
        target = Path(target or source)
        self.folders_to(target)
        self.argv += [option, str(source), str(target)]
        self.mounted.append(target)

    def filesystem(self, option: str, target: str, *options: str) -> None:
        """A filesystem of its own at `target`: "--proc", "--dev" or "--tmpfs" (after its `options`)."""
        self.folders_to(Path(target))
        self.argv += [*options, option, target]
        self.folders.add(Path(target))  # empty: what is made under it needs its folders made too


def allow_list(
    workdir: Path, shared: Path | None, compiled: Path | None, reference: Path | None = None
) -> list[tuple[str, str, str]]:
    """The new root of both mechanisms, in the order it is built: (kind, source, target). Kinds: "symlink" (the
    source is the link's text), "ro" and "rw" (a host path bound read-only or writable), "device" (a host device
    bound), and filesystems of their own, "proc", "dev" and "tmpfs" (no source)."""
    found = []
    for name in SYSTEM:
        if os.path.islink(name):
            found.append(("symlink", os.readlink(name), name))
        elif os.path.isdir(name):
            found.append(("ro", name, name))
    found += [("ro", f"/etc/{name}", f"/etc/{name}") for name in SYSTEM_ETC if os.path.exists(f"/etc/{name}")]
    found += [("ro", str(workdir / "passwd"), "/etc/passwd"), ("proc", "", "/proc"), ("dev", "", "/dev")]
    found += [("device", str(device), str(device)) for device in gpu_devices()]
    if gpu_devices():
        found += [("ro", path, path) for path in gpu_sys()]
    found += [("tmpfs", "", folder) for folder in ("/tmp", "/dev/shm")]
    found += [
        ("ro", str(path), str(path))
        for path in outermost(
            [*python_paths(), *bytecode_mirrors(compiled), *([reference] if reference else [])]
        )
    ]
    found.append(("ro", str(workdir), str(workdir)))
    found += [
        ("rw", str(workdir / name), str(workdir / name)) for name in WRITABLE if (workdir / name).is_dir()
    ]
    if shared is not None:
        found.append(("rw", str(shared), str(shared)))
    return found


def bubblewrap_argv(
    workdir: Path,
    cwd: Path,
    shared: Path | None,
    env: dict[str, str],
    compiled: Path | None = None,
    reference: Path | None = None,
) -> list[str]:
    """bwrap, started by `bwrap_launch` (nothing of the host on bwrap's command line or in its environment), with
    its options: an allow-list root over the system, the environment and the working copy, and `env` for the
    command. A root grader builds it with privileges and the command then drops to the working copy's owner; anyone
    else gets a user namespace in which they are that owner."""
    owner = owner_of(workdir)
    options = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    # pid 1 is the course's init (`sandbox_init`), not bwrap's reaper: it dies with bwrap and takes the namespace
    # with it (a command that is pid 1 itself outlives bwrap once setpriv changed its uid: nothing may signal it
    # then), and neither its memory nor its environment can be read, nor can it be traced
    options += ["--as-pid-1", "--die-with-parent", "--hostname", "sandbox"]
    if os.geteuid() == 0:
        options += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]  # for setpriv below, then none
    else:
        options += ["--unshare-user", "--uid", str(owner), "--gid", str(owner), "--cap-drop", "ALL"]
    # the command's environment is `env` alone: jupyter_client's JPY_PARENT_PID (the grader's pid) would make
    # ipykernel take bwrap's pid 1 for a dead parent and exit
    for name, value in env.items():
        options += ["--setenv", name, value]
    root = Root()
    for kind, source, target in allow_list(workdir, shared, compiled, reference):
        if kind in BWRAP_FILESYSTEMS:
            root.filesystem(BWRAP_FILESYSTEMS[kind], target, *(TMPFS_OPTIONS if kind == "tmpfs" else ()))
        else:
            root.mount(BWRAP_MOUNTS[kind], source, target)
    options += [*root.argv, "--chdir", str(cwd)]
    dropping = []
    if os.geteuid() == 0:  # the uid dropped; changing it cleared bwrap's parent-death signal, set again
        dropping = ["setpriv", f"--reuid={owner}", f"--regid={owner}", "--clear-groups", "--no-new-privs"]
        dropping += ["--pdeathsig=KILL", "--"]
    launcher = [sys.executable, "-I", "-S", str(Path(__file__).with_name("bwrap_launch.py"))]
    init_code = Path(__file__).with_name("sandbox_init.py").read_text(encoding="utf-8")
    init = [sys.executable, "-I", "-S", "-c", init_code]
    return [*launcher, tool("bwrap"), str(len(options)), *options, *init, *dropping]


def namespaces_argv(
    workdir: Path,
    cwd: Path,
    shared: Path | None,
    argv: list[str],
    env: dict,
    compiled: Path | None,
    reference: Path | None = None,
) -> list[str]:
    """The fallback's launcher (`course.judge.enter`), its spec written into the working copy: the same new root as
    bubblewrap's (`allow_list`), built by the launcher itself."""
    privileged = os.geteuid() == 0
    spec = {
        "root": allow_list(workdir.resolve(), shared.resolve() if shared else None, compiled, reference),
        "mount_point": str(temp_folder()),  # where the new root is built (the launcher keeps its own view)
        "tmpfs_bytes": TMPFS_BYTES,
        "argv": argv,
        "env": env,
        "cwd": str(cwd),
        "privileged": privileged,
        "uid": owner_of(workdir),
    }
    spec_path = workdir / "sandbox.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    # --kill-child takes the sandbox down with unshare; the parent-death signal takes unshare down with the grader
    unshare = [tool("setpriv"), "--pdeathsig=KILL", "--", tool("unshare"), "--fork", "--kill-child"]
    unshare += ["--mount", "--net", "--pid", "--ipc"]
    if not privileged:
        unshare += ["--user", "--map-root-user"]
    return [*unshare, sys.executable, "-m", "course.judge.enter", str(spec_path)]


def command(
    argv: list[str],
    workdir: Path,
    mechanism: str,
    cwd: Path | None = None,
    triton_cache: Path | None = None,
) -> tuple[list[str], dict]:
    """(command, environment) that runs `argv` under `mechanism` with the working copy `workdir`, in `cwd`
    (default: the working copy), writing Triton's cache to `triton_cache` if given."""
    compiled, reference = readable_bytecode(mechanism), readable_reference(mechanism)
    env = child_env(workdir, workdir / "home", triton_cache, compiled, reference)
    cwd = cwd or workdir
    if mechanism == "none":
        return argv, env
    memory = cgroup.joining(cgroup.for_grading(owner_of(workdir)))
    if mechanism == "bubblewrap":
        inner = bubblewrap_argv(workdir, cwd, triton_cache, env, compiled, reference)
        return [*memory, *limits_argv(), *inner, *argv], env
    launcher_env = {**env, "PYTHONPATH": str(ROOT)}
    inner = namespaces_argv(workdir, cwd, triton_cache, argv, env, compiled, reference)
    return [*memory, *limits_argv(), *inner], launcher_env


PROBE = "import os, sys; print(os.path.exists(sys.argv[1]), os.getuid())"


@functools.cache
def probe(mechanism: str) -> tuple[bool, str]:
    """(works, why): whether a child under `mechanism` runs here and cannot see the course."""
    program = {"bubblewrap": "bwrap", "namespaces": "unshare"}[mechanism]
    if shutil.which(program) is None or sys.platform != "linux":
        return False, f"{program} not found"
    work = workspace("course-probe-")
    try:
        argv, env = command([sys.executable, "-c", PROBE, str(ROOT / "course")], work, mechanism)
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return False, f"{program} failed: {error}"
    finally:
        kill_processes_of(owner_of(work))
        remove_workspace(work)
    if done.returncode != 0 or not done.stdout.startswith("False"):
        return False, f"{program} failed: {(done.stderr or done.stdout).strip()[-300:]}"
    return True, describe(mechanism)


def describe(mechanism: str) -> str:
    return {
        "bubblewrap": "allow-list root (bwrap), new mount/PID/IPC/network namespaces, a uid of its own, limits",
        "namespaces": "allow-list root (unshare, weaker): new mount/PID/IPC/network namespaces, a uid of its own, limits",
        "none": "no isolation (asked for with --no-sandbox)",
    }[mechanism]


def requested(no_sandbox: bool = False, allow_weaker: bool = False) -> str:
    """The sandbox an instructor's command asks for: "none" (`--no-sandbox`), ALLOW_WEAKER
    (`--allow-weaker-sandbox`), else "auto"."""
    return "none" if no_sandbox else ALLOW_WEAKER if allow_weaker else "auto"


def choose(requested: str) -> tuple[str, str]:
    """(mechanism, why) for `requested`: "auto" is the allow-list (bubblewrap) or a refusal, unless
    FLASH_COURSE_ALLOW_WEAKER_SANDBOX=1 in the environment (every command, the processes it starts too) makes it
    ALLOW_WEAKER; ALLOW_WEAKER takes the best that works here, the weaker fallback included (the instructor named
    it); a named mechanism must work; "none" is the instructor's explicit choice. A refusal is a ValueError: the
    host's setting, said in both languages."""
    if requested == "none":
        return "none", describe("none")
    if requested == "auto" and os.environ.get(ALLOW_WEAKER_ENV) == "1":
        requested = ALLOW_WEAKER
    tried = {}
    for mechanism in {"auto": MECHANISMS[:1], ALLOW_WEAKER: MECHANISMS[:-1]}.get(requested, (requested,)):
        works, why = probe(mechanism)
        if works:
            return mechanism, why
        tried[mechanism] = why
    reasons = "; ".join(f"{m}: {why}" for m, why in tried.items())
    if requested == "auto":
        raise ValueError(
            bilingual(
                f"拒绝评分：这台主机上 bubblewrap（允许列表沙箱）不可用（{reasons}）。请安装它（以 root 运行 "
                "bash course/install_sandbox.sh，或 apt-get install bubblewrap）；若接受较弱的退路"
                f"（unshare），请加 --allow-weaker-sandbox 或设置 {ALLOW_WEAKER_ENV}=1；--no-sandbox 则完全不隔离。",
                f"grading refused: bubblewrap (the allow-list sandbox) does not work on this host ({reasons}). "
                "Install it (as root: bash course/install_sandbox.sh, or apt-get install bubblewrap); to accept the "
                f"weaker fallback (unshare), name it: --allow-weaker-sandbox or {ALLOW_WEAKER_ENV}=1; "
                "--no-sandbox runs students' code unisolated.",
            )
        )
    raise ValueError(
        bilingual(
            f"没有可用的沙箱（{reasons}）。请安装 bubblewrap（apt-get install bubblewrap），"
            "或在明确知道风险时用 --no-sandbox 评分。",
            f"no sandbox works on this host ({reasons}). Install bubblewrap (apt-get install bubblewrap), "
            "or grade with --no-sandbox if you accept running students' code unisolated.",
        )
    )


def copy_plain_tree(
    source: Path,
    target: Path,
    owner: int,
    skip: str = ".ipynb",
    limit: int = 256 << 20,
    entries: int = WORKSPACE_FILES // 2,
) -> None:
    """Copy the folders and regular files under `source` to `target`, owned by `owner`, never through a link
    (links, devices and FIFOs are left out), nor files named `*skip`, at most `limit` bytes and `entries` files
    and folders in all."""
    budget = limit
    for folder, subfolders, files in os.walk(source, followlinks=False):
        if entries <= 0:
            return
        entries -= 1
        subfolders[:] = [d for d in subfolders if Path(folder, d).resolve() != target.resolve()]
        into = private_folder(target / Path(folder).relative_to(source), owner)
        for name in [f for f in files if not f.endswith(skip)]:
            try:
                fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue  # a link, or gone
            with open(fd, "rb") as data:
                info = os.fstat(fd)
                if stat.S_ISREG(info.st_mode) and info.st_size <= budget and entries > 0:
                    budget, entries = budget - info.st_size, entries - 1
                    made = os.open(into / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                    with open(made, "wb") as copy:
                        if os.geteuid() == 0:
                            os.fchown(made, owner, owner)
                        copy.write(data.read(info.st_size))


def bytes_used(folder: Path) -> int:
    """The disk space the files under `folder` take (allocated blocks: a sparse file counts what it holds),
    never following a link."""
    used = 0
    for parent, _, files in os.walk(folder, followlinks=False):
        for name in files:
            with contextlib.suppress(OSError):
                used += os.lstat(os.path.join(parent, name)).st_blocks * 512
    return used


def kill_processes_of(owner: int) -> None:
    """Kill every process left running as a grading's own uid (one that escaped its session and process group),
    then remove its memory cgroup."""
    import psutil

    if os.geteuid() != 0 or owner < UID_BASE:
        return  # not a uid of its own: the grader's processes are not ours to kill
    for process in psutil.process_iter(["uids"]):
        with contextlib.suppress(psutil.Error):
            if process.info["uids"] and process.info["uids"].real == owner:
                process.kill()
    cgroup.release(owner)
