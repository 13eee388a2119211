"""A hostile student against the sandbox, the judge's end of the child and the notebook's kernel.

Each test is one attack through the real sandbox (`sandbox.command`, `Child`, `SandboxedKernelManager`). A test
that passes is an attack that failed (a regression test); an attack that still works is marked
`xfail(strict=True, reason="HOLE: ...")`, so fixing the hole turns it into an unexpected pass.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pty
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import termios
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from course import ROOT
from course.grading import runner
from course.judge import cgroup, sandbox
from course.judge.child import CallFailed, Child

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux namespaces")
ISOLATING = [m for m in sandbox.MECHANISMS if m != "none"]
AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="the grader runs as root (a uid per grading)")
MIB = 1 << 20


def needs(mechanism: str) -> None:
    """Skip, with the reason printed, where `mechanism` does not run here (bwrap missing from PATH, namespaces
    refused): an attack that cannot start proves nothing either way. CI has bubblewrap (test_sandbox.py fails
    loudly without it)."""
    works, why = sandbox.probe(mechanism)
    if not works:
        pytest.skip(f"{mechanism}: {why}")


@pytest.fixture(autouse=True)
def the_sandbox_runs_here(request):
    """Each attack's mechanism (its `mechanism` parameter, else bubblewrap) runs here, or the attack is skipped."""
    callspec = getattr(request.node, "callspec", None)
    needs(callspec.params.get("mechanism", "bubblewrap") if callspec else "bubblewrap")


def hole(reason: str):
    return pytest.mark.xfail(strict=True, reason=f"HOLE: {reason}")


def sandboxed(mechanism: str, code: str, *args: str, work: Path | None = None, **options) -> object:
    """What `code` (run in the sandbox) printed as JSON on its last line."""
    own = work is None
    work = work or sandbox.workspace()
    try:
        argv, env = sandbox.command(
            [sys.executable, "-c", textwrap.dedent(code), *args], work, mechanism, **options
        )
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        if own:
            sandbox.kill_processes_of(sandbox.owner_of(work))  # and its memory cgroup
            sandbox.remove_workspace(work)


@contextlib.contextmanager
def running(mechanism: str, code: str, *args: str, ready: tuple[str, ...] = ("ready",)):
    """A sandboxed process of another grading, started as the judge starts a child, once it printed "ready" (or
    another first line in `ready`: "" for one that may be killed first)."""
    work = sandbox.workspace()
    argv, env = sandbox.command([sys.executable, "-c", textwrap.dedent(code), *args], work, mechanism)
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert process.stdout.readline().strip() in ready
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        sandbox.kill_processes_of(sandbox.owner_of(work))
        sandbox.remove_workspace(work)


def live_processes_of(uid: int) -> list[int]:
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            fields = dict(
                line.split(":", 1) for line in Path(f"/proc/{name}/status").read_text().splitlines()
            )
            if int(fields["Uid"].split()[0]) == uid and not fields["State"].strip().startswith("Z"):
                found.append(int(name))
    return found


# ---------------------------------------------------------------- (a) reading the host, (f) the secret, (g) environment


@pytest.fixture
def planted(monkeypatch):
    """A token in files all over the host (where an instructor might keep a salt) and in the grader's environment."""
    token = f"flash-secret-{secrets.token_hex(8)}"
    paths = [
        Path(p) / f"flash-attack-{secrets.token_hex(4)}"
        for p in ("/opt", "/srv", "/root", "/var/lib", "/etc")
    ]
    if os.geteuid() != 0:
        pytest.skip("plants files in system folders")
    for path in paths:
        path.mkdir(parents=True)
        (path / "salt").write_text(token)
        (path / "salt").chmod(0o644)
    monkeypatch.setenv("FLASH_COURSE_TEST_SALT", token)
    yield token, [path / "salt" for path in paths]
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)


SEARCH = """
import json, os, sys
token, paths = sys.argv[1], sys.argv[2:]
skip = ("/proc", "/sys", "/dev", "/usr", sys.prefix, sys.base_prefix)
found = [p for p in paths if os.path.exists(p)]
found += [f"env {k}" for k, v in os.environ.items() if token in v]
for folder, subfolders, files in os.walk("/"):
    subfolders[:] = [d for d in subfolders if not os.path.join(folder, d).startswith(skip)]
    for name in files:
        path = os.path.join(folder, name)
        try:
            if os.path.isfile(path) and os.path.getsize(path) < 1 << 20 and token in open(path, errors="ignore").read():
                found.append(path)
        except OSError:
            pass
print(json.dumps(found))
"""


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_no_planted_secret_is_anywhere_in_the_allow_list_sandbox(planted, mechanism):
    """Files all over the host: the fallback's root is an allow-list too (issue 45, principle 9: its deny-list of
    hidden folders showed /opt, /srv, /var/lib and /etc, where an instructor may keep a salt or an overlay)."""
    token, paths = planted
    salt = ROOT / ".grading_salt"  # never created here: only its path is probed
    assert sandboxed(mechanism, SEARCH, token, *map(str, paths), str(salt)) == []


PROCESSES = """
import ctypes, json, os, signal, sys
judge = int(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
others = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        continue
    if uid != os.getuid():
        others.append(pid)
seen = {"others": others}
for name, pid in (("judge", judge), ("reaper", 1)):
    traced = libc.ptrace(16, pid, None, None)  # PTRACE_ATTACH
    try:
        os.kill(pid, signal.SIGTERM if pid == 1 else 0)
        signalled = True
    except OSError:
        signalled = False
    try:
        environ = open(f"/proc/{pid}/environ", "rb").read()[:10].decode(errors="replace")
    except OSError:
        environ = None
    seen[name] = {"traced": traced == 0, "signalled": signalled, "environ": environ}
print(json.dumps(seen))
"""


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_no_other_process_can_be_seen_traced_or_read(mechanism):
    """Nothing outside the sandbox; inside it, bwrap's pid 1 (it reaps, and takes the namespace down with it when
    the grader kills bwrap) is the grader's, and can be neither traced, signalled nor read."""
    seen = sandboxed(mechanism, PROCESSES, str(os.getpid()))
    denied = {"traced": False, "signalled": False, "environ": None}
    reaper = (
        ["1"] if mechanism == "bubblewrap" and os.geteuid() == 0 else []
    )  # a user namespace maps it to ours
    assert seen == {"others": reaper, "judge": denied, "reaper": denied if reaper else seen["reaper"]}


ENVIRONMENT = """
import os, sys


def probe():
    fds = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    try:
        open("/dev/tty").close()
        tty = "opened"
    except OSError as error:
        tty = error.strerror
    return {"env": dict(os.environ), "fds": fds, "ttys": [os.isatty(i) for i in range(3)], "tty": tty}
"""


def test_the_childs_environment_and_descriptors_hold_nothing_of_the_judge(monkeypatch):
    token = secrets.token_hex(8)
    monkeypatch.setenv("FLASH_COURSE_TEST_SALT", token)
    child = Child(ENVIRONMENT, {}, "bubblewrap")
    try:
        seen = child.call("probe", timeout=120).result
        expected = {*sandbox.child_env(child.work, child.work / "home"), *sandbox.PASSED_ENV, "PWD"}
    finally:
        child.close()
    assert set(seen["env"]) <= expected and token not in json.dumps(seen["env"])
    outside = {
        fd: target
        for fd, target in seen["fds"].items()
        if target.startswith("/") and not target.startswith((str(child.work), "/dev/", "/proc/"))
    }
    assert outside == {}  # no descriptor of a host file or folder the judge had open
    assert (
        list(seen["ttys"]) == [False, False, False] and seen["tty"] != "opened"
    )  # (h) no terminal to inject into


@pytest.mark.xfail(
    strict=False,  # only where the environment lives in the course or the grader's home (not on the GPU host)
    reason="HOLE: (j, information only) the sandbox shows host paths: /proc/self/mountinfo and sys.prefix name the "
    "course root (the venv is bound at its host path inside it), the grader's home (/root/.pyenv) and the job's "
    "scratch folder",
)
def test_no_host_path_shows_in_the_sandbox():
    shown = sandboxed(
        "bubblewrap",
        """
        import json
        print(json.dumps(open("/proc/self/mountinfo").read()))
        """,
    )
    assert str(ROOT) not in shown and str(Path.home()) not in shown


@pytest.mark.parametrize("mechanism", ["bubblewrap", "namespaces"])
def test_the_gpu_sandbox_shows_no_host_network_or_cgroups_in_sys(mechanism, monkeypatch):
    """(j, information only, GPU hosts) with a GPU the sandbox gets the GPU's devices (a folder among them, as
    /dev/nvidia-caps is) and the parts of /sys the CUDA driver reads, not the host's network interfaces
    (/sys/class/net; the sandbox's own network has lo only) nor its cgroups (/sys/fs). Failed before: the whole host
    /sys was bound read-only, and the fallback could bind no device into its /dev, made read-only too early."""
    needs(mechanism)
    if not Path("/dev/pts").is_dir():
        pytest.skip("no /dev/pts here to stand in for a GPU's folder of devices")
    monkeypatch.setattr(
        sandbox, "gpu_devices", lambda: [Path("/dev/null"), Path("/dev/pts")]
    )  # as on a GPU host
    seen = sandboxed(
        mechanism,
        """
        import json, os
        def listed(folder):
            return sorted(os.listdir(folder)) if os.path.isdir(folder) else []
        print(json.dumps({name: listed(name) for name in (
            "/sys/class/net", "/sys/devices/virtual/net", "/sys/fs/cgroup", "/sys/bus/pci/devices")}
            | {"devices": os.path.isdir("/dev/pts") and os.path.exists("/dev/null")}))
        """,
    )
    assert seen["devices"]
    assert set(seen["/sys/class/net"]) <= {"lo"} and seen["/sys/devices/virtual/net"] == []
    assert seen["/sys/fs/cgroup"] == []
    host_pci = Path("/sys/bus/pci/devices")
    assert seen["/sys/bus/pci/devices"] == (sorted(os.listdir(host_pci)) if host_pci.is_dir() else [])


@pytest.mark.parametrize("mechanism", ["bubblewrap", "namespaces"])
def test_a_system_folder_that_is_also_pythons_prefix_is_bound(mechanism, monkeypatch):
    """Python installed under /usr (as on the GPU host: its prefix is a system folder too) names /usr twice in the
    new root. Failed before under the fallback: it opened each path once and found no descriptor for the second."""
    needs(mechanism)
    paths = sandbox.python_paths
    monkeypatch.setattr(sandbox, "python_paths", lambda: [*paths(), Path("/usr")])
    assert sandboxed(mechanism, "import json, os; print(json.dumps(os.path.isdir('/usr/bin')))")


@pytest.mark.gpu
@pytest.mark.parametrize("mechanism", ["bubblewrap", "namespaces"])
def test_cuda_and_a_triton_kernel_run_in_the_sandbox_with_only_the_gpu_parts_of_sys(mechanism):
    """The other half of the test above, on the GPU host: with only the GPU's parts of /sys, CUDA starts, cuBLAS
    multiplies and a Triton kernel compiles and runs in each sandbox."""
    seen = sandboxed(
        mechanism,
        """
        import json, os, torch
        from utils import io_kernels
        x = torch.arange(128 * 64, device="cuda", dtype=torch.float32)
        square = x[:4096].view(64, 64)
        print(json.dumps({
            "gpu": torch.cuda.get_device_name(),
            "copied": bool(torch.equal(io_kernels.copy(x), x)),
            "product": bool(torch.allclose(square @ torch.eye(64, device="cuda"), square)),
            "sys": sorted(os.listdir("/sys")),
        }))
        """,
    )
    print(seen)
    assert seen["copied"] and seen["product"], seen
    assert seen["sys"] == sorted({path.split("/")[2] for path in sandbox.gpu_sys()}), seen


LAUNCHERS = """
import json, os
seen = {}
for pid in filter(str.isdigit, os.listdir("/proc")):
    for name in ("cmdline", "environ"):
        try:
            seen[f"{pid}/{name}"] = open(f"/proc/{pid}/{name}", "rb").read().decode(errors="replace")
        except OSError:
            pass
print(json.dumps({what: text for what, text in seen.items() if not what.startswith(f"{os.getpid()}/")}))
"""


@AS_ROOT
@pytest.mark.parametrize("grader", ["root", "unprivileged"])
def test_no_launcher_shows_the_host_in_the_sandbox(grader, monkeypatch):
    """(j) Principle 8 of issue 45: bwrap's pid 1 (its reaper, a copy of bwrap) is a process the sandbox sees: its
    command line held every mount's host path (the working copy, the environment, the grader's bytecode folder)
    and its environment the grader's variables (readable where the sandbox shares the grader's uid). Whatever the
    student's code reads of any other process now is empty or its own command."""
    work = sandbox.workspace(owner=None if grader == "root" else 0)
    if (
        grader == "unprivileged"
    ):  # a user namespace of its own, which CI, running as root, never takes otherwise
        monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    try:
        seen = sandboxed("bubblewrap", LAUNCHERS, work=work)
    finally:
        monkeypatch.undo()
        sandbox.kill_processes_of(sandbox.owner_of(work))
        sandbox.remove_workspace(work)
    shown = {what: text for what, text in seen.items() if str(work) in text or "bind" in text}
    environments = {what: text for what, text in seen.items() if what.endswith("environ") and text}
    assert seen and shown == {} and environments == {}


def sandboxed_by_an_unprivileged_grader(mechanism: str, script: str, monkeypatch):
    """`sandboxed` as a grader that is not root starts it: the grader's own uid owns the working copy."""
    work = sandbox.workspace(owner=0)
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    try:
        return sandboxed(mechanism, script, work=work)
    finally:
        monkeypatch.undo()
        sandbox.remove_workspace(work)


TRACE_THE_REAPER = """
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
attached = libc.ptrace(16, 1, None, None) == 0  # PTRACE_ATTACH
if attached:  # let it go again, or the sandbox never ends
    os.waitpid(1, 0x40000000)  # __WALL
    libc.ptrace(17, 1, None, None)  # PTRACE_DETACH
read = []
for name in ("maps", "mem", "environ"):
    try:
        with open(f"/proc/1/{name}", "rb") as f:
            f.read(1)
        read.append(name)
    except OSError:
        pass
print(json.dumps({"traced": attached, "read": read}))
"""


@AS_ROOT
def test_an_unprivileged_graders_reaper_cannot_be_traced(monkeypatch):
    """(j) Under a grader that is not root, bwrap's pid 1 (its reaper) had the sandbox's own uid in its user namespace
    and no more rights: the student's code traced it, could stop it (the sandbox then hung until the grader's
    timeout) and read its memory (the mount options: host paths). pid 1 is now the course's init, undumpable."""
    seen = sandboxed_by_an_unprivileged_grader("bubblewrap", TRACE_THE_REAPER, monkeypatch)
    assert seen == {"traced": False, "read": []}


@pytest.mark.parametrize("mechanism", ["namespaces"])
def test_the_fallbacks_launcher_leaves_nothing_of_the_host_to_read(mechanism):
    """(j) The same for the fallback, whose pid 1 is the student's own process: its launcher's spec (the hidden
    folders, the kept ones, the environment) lay in the working copy, readable there; the launcher removes it once
    read."""
    assert "sandbox.json" not in sandboxed(mechanism, "import json, os; print(json.dumps(os.listdir('.')))")


# ---------------------------------------------------------------- (b) writing outside the sandbox's own folders


WRITES = """
import json, os, sys
work = os.getcwd()
targets = [
    "/flash-attack", "/etc/flash-attack", "/usr/flash-attack", os.path.join(sys.prefix, "flash-attack"),
    os.path.join(sys.base_prefix, "flash-attack"), os.path.join(work, "flash-attack"), os.path.join(work, "in"),
]
appended = [os.path.join(work, "utils", "__init__.py"), os.path.join(work, "passwd"), "/etc/passwd"]
written = []
for path in targets:
    try:
        os.makedirs(path) if path.endswith("/in") else open(path, "x").close()
        written.append(path)
    except OSError:
        pass
for path in appended:
    try:
        open(path, "a").close()
        written.append(path)
    except OSError:
        pass
print(json.dumps(written))
"""


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_nothing_outside_the_writable_folders_can_be_written(mechanism):
    assert sandboxed(mechanism, WRITES) == []


@AS_ROOT
@pytest.mark.parametrize("mechanism", ISOLATING)
def test_the_triton_cache_of_another_grading_is_out_of_reach(mechanism):
    mine, theirs = sandbox.new_owner(), sandbox.new_owner()
    own_cache, other_cache = (
        sandbox.shared_folder("course-triton-", mine),
        sandbox.shared_folder("course-triton-", theirs),
    )
    (other_cache / "kernel.so").write_bytes(b"compiled")
    work = sandbox.workspace(owner=mine)
    try:
        seen = sandboxed(
            mechanism,
            """
            import json, os, sys
            own, other = sys.argv[1], sys.argv[2]
            open(os.path.join(own, "mine"), "w").close()
            try:
                open(os.path.join(other, "kernel.so"), "ab").close()
                reached = True
            except OSError:
                reached = False
            print(json.dumps({"listed": os.path.exists(other) and os.listdir(other), "reached": reached}))
            """,
            str(own_cache),
            str(other_cache),
            work=work,
            triton_cache=own_cache,
        )
    finally:
        for folder in (own_cache, other_cache, work):
            sandbox.remove_workspace(folder)
    assert seen == {"listed": False, "reached": False}


# ---------------------------------------------------------------- (c) reaching another student's grading


ABSTRACT = """
import json, socket, sys
try:
    socket.socket(socket.AF_UNIX).connect(sys.argv[1].replace("@", "\\0", 1))
    print(json.dumps("connected"))
except OSError:
    print(json.dumps("refused"))
"""
LISTENER = """
import socket, sys, time
server = socket.socket(socket.AF_UNIX)
server.bind(sys.argv[1].replace("@", "\\0", 1))
server.listen()
print("ready", flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_abstract_unix_sockets_reach_neither_the_host_nor_another_grading(mechanism):
    host_name, their_name = (f"@flash-attack-{secrets.token_hex(6)}" for _ in range(2))
    host = socket.socket(socket.AF_UNIX)
    host.bind(host_name.replace("@", "\0", 1))
    host.listen()
    try:
        with running(mechanism, LISTENER, their_name):
            seen = [sandboxed(mechanism, ABSTRACT, name) for name in (host_name, their_name)]
    finally:
        host.close()
    assert seen == ["refused", "refused"]


MESSAGE_QUEUE = """
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
name = sys.argv[1].encode()
if sys.argv[2] == "write":
    made = libc.mq_open(name, os.O_CREAT | os.O_RDWR, 0o666, None)
    print(json.dumps(made >= 0))
else:
    print(json.dumps(libc.mq_open(name, os.O_RDWR) >= 0))
"""


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_posix_message_queues_do_not_outlive_a_grading(mechanism):
    name = f"/flash-attack-{secrets.token_hex(6)}"
    assert sandboxed(mechanism, MESSAGE_QUEUE, name, "write") is True
    assert sandboxed(mechanism, MESSAGE_QUEUE, name, "read") is False


LEFT_BEHIND = """
import json, os, sys
written = []
for folder in sys.argv[2:]:
    try:
        open(os.path.join(folder, sys.argv[1]), "x").close()
        written.append(folder)
    except OSError:
        pass
print(json.dumps(written))
"""
SHARED_FOLDERS = (
    "/tmp",
    "/var/tmp",
    "/dev/shm",
    "/run/lock",
    "/var/lock",
    "/dev/mqueue",
    "/var/crash",
    "/run/shm",
)


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_no_world_writable_host_folder_keeps_a_file_for_the_next_student(mechanism):
    name = f"flash-attack-{secrets.token_hex(6)}"
    try:
        sandboxed(mechanism, LEFT_BEHIND, name, *SHARED_FOLDERS)
        kept = [folder for folder in SHARED_FOLDERS if Path(folder, name).exists()]
    finally:
        for folder in SHARED_FOLDERS:
            with contextlib.suppress(OSError):
                Path(folder, name).unlink()
    assert kept == []


KILLER = """
import json, os, signal, sys
try:
    os.kill(-1, signal.SIGKILL)  # every process this uid may signal
except OSError:
    pass
try:
    os.kill(int(sys.argv[1]), signal.SIGKILL)
    killed = True
except OSError:
    killed = False
print(json.dumps(killed))
"""
SLEEPER = """
import time
print("ready", flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_signals_cannot_reach_another_grading(mechanism):
    with running(mechanism, SLEEPER) as victim:
        assert sandboxed(mechanism, KILLER, str(victim.pid)) is False
        time.sleep(0.2)
        assert victim.poll() is None


@AS_ROOT
@pytest.mark.parametrize("mechanism", ISOLATING)
def test_a_child_that_leaves_its_session_dies_with_its_grading(mechanism):
    escape = "import os, threading, time\n\ndef escape():\n    os.setsid()\n"
    escape += "    threading.Thread(target=time.sleep, args=(60,)).start()  # outlives the judge's pipe\n"
    escape += "    return os.getpid()\n"
    child = Child(escape, {}, mechanism)
    owner = sandbox.owner_of(child.work)
    try:
        assert child.call("escape", timeout=120).result <= 2  # a pid of the sandbox's own namespace
    finally:
        child.close()
    time.sleep(0.5)
    left = live_processes_of(owner)
    for pid in left:  # the processes this test started
        os.kill(pid, signal.SIGKILL)
    assert left == []


@AS_ROOT
def left_after_killing(mechanism: str, starter: list[str]) -> list[int]:
    """The processes of a sleeping sandbox's grading still alive 5 s after the process that started it was killed:
    its launcher (bwrap, or unshare) itself, or `starter` (a program that runs the launcher) when given."""
    work = sandbox.workspace()
    owner = sandbox.owner_of(work)
    argv, env = sandbox.command([sys.executable, "-c", textwrap.dedent(SLEEPER)], work, mechanism)
    process = subprocess.Popen(
        [*starter, *argv], env=env, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert process.stdout.readline().strip() == "ready"
        process.kill()
        process.wait()
        deadline = time.monotonic() + 5
        while live_processes_of(owner) and time.monotonic() < deadline:
            time.sleep(0.05)
        return live_processes_of(owner)
    finally:
        sandbox.kill_processes_of(owner)
        sandbox.remove_workspace(work)


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_the_sandbox_dies_with_its_launcher(mechanism):
    """The grader stops a sandbox by killing the process it started (bwrap, or unshare): a kernel that ignores its
    shutdown, the disk quota's kill. Nothing of the grading may run on afterwards (under bwrap's --as-pid-1 the
    student's process, once its uid was changed, outlived it, spinning with the CPU of later students)."""
    assert (
        left_after_killing(mechanism, []) == []
    )  # the launcher only, as jupyter_client and the quota watch do


GRADER = """
import subprocess, sys
process = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, text=True)
print(process.stdout.readline().strip(), flush=True)
process.wait()
"""


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_the_sandbox_dies_with_the_grader_that_started_it(mechanism):
    """A grader killed outright (a batch system's timeout, a cancelled Ray task, `kill -9`) runs no cleanup. On the
    H200 the fallback's sandboxes outlived such a grader, four idle kernels for 15 minutes (unshare does not die
    with its parent; bwrap does, through --die-with-parent)."""
    assert left_after_killing(mechanism, [sys.executable, "-c", GRADER]) == []


# ---------------------------------------------------------------- (d) making the judge read or follow what the child made


FORGED_ANSWER = """
import json, os, socket, sys, time


def forge(kind):
    work, reply = sys.argv[1], int(sys.argv[2])
    call = max(int(n) for n in os.listdir(os.path.join(work, "in")) if n.isdigit())
    out = os.path.join(work, "out")
    answer, header, data = (os.path.join(out, f"{call}{suffix}") for suffix in (".answer", ".json", ""))
    plain = {"ok": True, "result": {"tensor": "t0"}}
    tensors = {"t0": {"dtype": "float32", "shape": [1], "offset": 0, "bytes": 4}}
    if kind == "directory":
        os.mkdir(answer)
    elif kind == "socket":
        socket.socket(socket.AF_UNIX).bind(answer)
    elif kind == "hardlink":
        open(os.path.join(out, "twin"), "w").write(json.dumps(plain))
        os.link(os.path.join(out, "twin"), answer)
    elif kind == "deep":
        open(answer, "w").write("[" * 200000 + "]" * 200000)
    elif kind == "digits":
        open(answer, "w").write('{"ok": true, "result": {"value": 1}, "peak_memory_bytes": 1' + "0" * 5000 + "}")
    elif kind == "huge_shape":
        tensors = {"t0": {"dtype": "float32", "shape": [0, 2**70], "offset": 0, "bytes": 0}}
    elif kind == "huge_header":
        tensors = {f"t{i}": tensors["t0"] for i in range(60000)}
    if not os.path.exists(answer):
        open(answer, "w").write(json.dumps(plain))
    open(header, "w").write(json.dumps(tensors))
    open(data, "wb").write(bytes(4))
    os.write(reply, f"{call}\\n".encode())  # answered: the judge reads now, while this call never returns
    time.sleep(120)
"""


@pytest.mark.parametrize(
    "kind", ["directory", "socket", "hardlink", "deep", "digits", "huge_shape", "huge_header"]
)
def test_the_judge_refuses_odd_answer_files(kind):
    child = Child(FORGED_ANSWER, {}, "bubblewrap")
    try:
        with pytest.raises(CallFailed, match="unreadable"):
            child.call("forge", kind, timeout=120)
    finally:
        child.close()


FLOOD = """
import os, sys


def flood(lines):
    reply = int(sys.argv[2])
    junk = b"".join(b"x%d\\n" % i for i in range(lines)) if lines else b"x" * (4 << 20)
    with os.fdopen(reply, "wb", closefd=False) as pipe:
        pipe.write(junk)
    return 1
"""


@pytest.mark.parametrize("lines", [500_000, 0], ids=["distinct-lines", "no-newline"])
def test_the_judge_keeps_nothing_the_child_floods_the_reply_pipe_with(lines):
    child = Child(FLOOD, {}, "bubblewrap")
    try:
        with contextlib.suppress(CallFailed):
            child.call("flood", lines, timeout=20 if lines else 10)
        kept = sum(map(len, child.answered)) + len(child.pending)
    finally:
        child.close()
    assert kept < 64 << 10  # bytes the judge holds


def test_the_child_cannot_rewrite_its_log():
    child = Child(
        "import os\n\ndef truncate():\n    try:\n        os.open('/proc/self/fd/1', os.O_WRONLY | os.O_TRUNC)\n"
        "        return 'truncated'\n    except OSError as error:\n        return error.strerror\n",
        {},
        "bubblewrap",
    )
    try:
        assert child.call("truncate", timeout=120).result != "truncated"
    finally:
        child.close()


# ---------------------------------------------------------------- (e) limits


FILL = """
import json, os, sys
size, folders = int(sys.argv[1]), sys.argv[2:]
made = 0
for i, folder in enumerate(folders):
    try:
        fd = os.open(os.path.join(folder, f"fill-{i}"), os.O_WRONLY | os.O_CREAT, 0o600)
        os.posix_fallocate(fd, 0, size)
        os.close(fd)
        made += size
    except OSError:
        pass
print(json.dumps(made))
"""


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_the_private_tmp_and_shared_memory_are_bounded(mechanism):
    assert sandboxed(mechanism, FILL, str(sandbox.TMPFS_BYTES + MIB), "/tmp", "/dev/shm") == 0


@AS_ROOT
def test_the_working_copy_cannot_take_more_disk_than_its_budget():
    """(e) home/ and out/ were folders of the host's disk bounded only by the judge's 2-second watch (4 GiB) and
    RLIMIT_FSIZE per file, and the child's stdout went to its log on the same disk: a fast writer could fill the
    grader's disk (gradebook, other students' outputs) between two looks. A root grader now mounts a tmpfs of
    TMPFS_BYTES on each working copy; removing the working copy unmounts it."""
    if not sandbox.workspaces_bounded():
        pytest.skip("no tmpfs for working copies here: mounting is refused (course check warns)")
    work = sandbox.workspace()
    try:
        part = 512 * MIB
        folders = [str(work / "home"), str(work / "home"), str(work / "out")]
        taken = sandboxed("bubblewrap", FILL, str(part), *folders, work=work)
    finally:
        sandbox.kill_processes_of(sandbox.owner_of(work))
        sandbox.remove_workspace(work)
    assert taken <= sandbox.TMPFS_BYTES
    assert not work.exists()  # unmounted, then removed


@AS_ROOT
def test_a_killed_workers_working_copies_are_unmounted_with_its_job_folder(tmp_path, monkeypatch):
    """A worker killed at its job's timeout removes nothing: the runner unmounts what it left in the job's folder."""
    if not sandbox.workspaces_bounded():
        pytest.skip("no tmpfs for working copies here: mounting is refused (course check warns)")
    monkeypatch.setattr(sandbox.tempfile, "tempdir", str(tmp_path))
    works = [sandbox.workspace() for _ in range(2)]
    assert all(os.path.ismount(work) for work in works)
    sandbox.unmount_under(tmp_path)
    assert not any(os.path.ismount(work) for work in works)


MEMFD = """
import json, os, sys
fd = os.memfd_create("flash-attack")
try:
    os.posix_fallocate(fd, 0, int(sys.argv[1]))
    print(json.dumps(os.fstat(fd).st_size))
except OSError:
    print(json.dumps(0))
"""


@AS_ROOT
@pytest.mark.parametrize("mechanism", ISOLATING)
def test_the_sandbox_cannot_hold_more_memory_than_its_budget(mechanism, monkeypatch):
    """(e) A memfd is RAM that no per-process limit counts (and RLIMIT_AS is off on a GPU): the grading's memory
    cgroup counts it, and a grading past its budget is killed inside its cgroup, not the host's judge."""
    if cgroup.unavailable():
        pytest.skip(f"no memory cgroup for gradings here: {cgroup.unavailable()}")
    monkeypatch.setattr(cgroup, "budget", lambda: 256 * MIB)
    work = sandbox.workspace()
    owner = sandbox.owner_of(work)
    try:
        argv, env = sandbox.command([sys.executable, "-c", MEMFD, str(512 * MIB)], work, mechanism)
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    finally:
        sandbox.kill_processes_of(owner)
        sandbox.remove_workspace(work)
    assert done.returncode != 0 or json.loads(done.stdout.splitlines()[-1]) <= 256 * MIB  # killed, or refused
    assert not (cgroup.hierarchy()[0] / str(owner)).exists()  # released with the grading


@AS_ROOT
def test_threads_and_processes_are_bounded():
    started = sandboxed(
        "bubblewrap",
        """
        import json, threading
        threading.stack_size(1 << 16)
        stop, started = threading.Event(), 0
        try:
            while started < 100_000:
                threading.Thread(target=stop.wait, daemon=True).start()
                started += 1
        except RuntimeError:
            pass
        stop.set()
        print(json.dumps(started))
        """,
    )
    assert started < sandbox.LIMITS["nproc"]


RAISE = """
import json, os, resource
raised = []
for name in ("RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_CPU", "RLIMIT_CORE", "RLIMIT_AS"):
    limit = getattr(resource, name)
    soft, hard = resource.getrlimit(limit)
    if hard == resource.RLIM_INFINITY:
        continue
    try:
        resource.setrlimit(limit, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        raised.append(name)
    except (ValueError, OSError):
        pass
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
try:
    os.setuid(0)
    raised.append("uid 0")
except OSError:
    pass
caps = {k: int(status[k], 16) for k in ("CapPrm", "CapEff", "CapAmb")}
print(json.dumps({"raised": raised, "caps": caps, "no_new_privs": status["NoNewPrivs"].strip()}))
"""


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_limits_cannot_be_raised_and_no_privilege_is_left(mechanism):
    seen = sandboxed(mechanism, RAISE)
    assert seen == {"raised": [], "caps": {"CapPrm": 0, "CapEff": 0, "CapAmb": 0}, "no_new_privs": "1"}


# ---------------------------------------------------------------- the notebook's kernel (d, g, h)


KERNEL_PROBE = """
import fcntl, json, os, termios
work = {work!r}
seen = {{"read": [], "tiocsti": [], "echo_off": [], "env": dict(os.environ)}}
for fd in os.listdir("/proc/self/fd"):
    try:
        target = os.readlink(f"/proc/self/fd/{{fd}}")
    except OSError:
        continue
    if not target.startswith("/") or target.startswith((work, "/dev/null", "/proc/")):
        continue
    try:
        again = os.open(f"/proc/self/fd/{{fd}}", os.O_RDONLY | os.O_NONBLOCK)
        seen["read"].append(os.read(again, 4096).decode())
        os.close(again)
    except OSError:
        pass
    try:
        fcntl.ioctl(int(fd), termios.TIOCSTI, b"!")
        seen["tiocsti"].append(fd)
    except OSError:
        pass
    try:
        mode = termios.tcgetattr(int(fd))
        mode[3] &= ~termios.ECHO
        termios.tcsetattr(int(fd), termios.TCSANOW, mode)
        seen["echo_off"].append(fd)
    except (OSError, termios.error):
        pass
    try:
        os.write(int(fd), b"\\x1b]0;FORGED-BY-STUDENT\\x07 FORGED-BY-STUDENT\\n")
    except OSError:
        pass
print(json.dumps(seen))
"""


async def kernel_run(km, code: str, timeout: float = 120) -> str:
    client = km.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=timeout)
        printed = []

        def keep(message):
            if message["msg_type"] == "stream":
                printed.append(message["content"]["text"])

        await client.execute_interactive(code, output_hook=keep, timeout=timeout)
        return "".join(printed)
    finally:
        client.stop_channels()


@pytest.fixture(scope="module")
def kernel_seen(tmp_path_factory):
    """What a notebook's kernel reached of the grader, started with a terminal as the grader's stdout and a log
    (holding a secret line) as its stderr, as a grader started from a shell or by `course grade` has."""
    from course.judge.kernel import SandboxedKernelManager

    needs("bubblewrap")  # a module's fixture starts before the tests' own check
    folder = tmp_path_factory.mktemp("grader")
    (folder / "notebook").mkdir()
    log = folder / "grading.log"
    log.write_text("GRADER-ONLY: earlier students' lines\n")
    master, terminal = pty.openpty()

    async def run() -> dict:
        km = SandboxedKernelManager(kernel_name="python3")
        saved = os.dup(1), os.dup(2)
        logged = os.open(log, os.O_WRONLY | os.O_APPEND)
        os.dup2(terminal, 1)
        os.dup2(logged, 2)
        try:
            await km.start_kernel(cwd=str(folder / "notebook"))
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in (*saved, logged):
                os.close(fd)
        try:
            printed = await kernel_run(km, KERNEL_PROBE.format(work=str(km.work)))
        finally:
            await km.shutdown_kernel(now=True)
        return json.loads(printed.strip().splitlines()[-1])

    try:
        seen = asyncio.run(run())
        os.set_blocking(master, False)
        with contextlib.suppress(BlockingIOError):
            seen["terminal"] = os.read(master, 1 << 16).decode(errors="replace")
        seen["echo_on"] = bool(termios.tcgetattr(terminal)[3] & termios.ECHO)
        seen["log"] = log.read_text()
        return seen
    finally:
        os.close(master)
        os.close(terminal)


KERNEL_OUTPUT = (
    "(d/h) the notebook's kernel inherits the grader's stdout and stderr (jupyter_client's launch_kernel passes "
    "them through; ipykernel keeps them open as fds 40+): the job's grading.log under `course grade`, the terminal "
    "under a hand-run nbgrader. Through them the kernel {what}. Fix: in SandboxedKernelManager._async_pre_start_kernel "
    "give the kernel its own stdout/stderr (kw['stdout'] = kw['stderr'] = a file in its working copy, or DEVNULL)"
)


def test_the_kernel_cannot_read_the_graders_log(kernel_seen):
    assert not any("GRADER-ONLY" in text for text in kernel_seen["read"])


def test_the_kernel_cannot_write_to_the_graders_log_or_terminal(kernel_seen):
    assert "FORGED-BY-STUDENT" not in kernel_seen["log"] + kernel_seen.get("terminal", "")


def test_the_kernel_cannot_change_the_graders_terminal(kernel_seen):
    assert kernel_seen["echo_on"] and kernel_seen["echo_off"] == []


def test_the_kernel_cannot_inject_keystrokes_into_the_graders_terminal(kernel_seen):
    assert (
        kernel_seen["tiocsti"] == []
    )  # TIOCSTI needs the terminal as controlling tty (a new session has none)


def test_the_kernels_environment_holds_nothing_of_the_grader(kernel_seen):
    """(g) Not even JPY_PARENT_PID, the grader's host pid, which jupyter_client adds after the sandbox chose the
    environment (bwrap unsets it; the fallback's launcher sets the environment it was given)."""
    assert set(kernel_seen["env"]) <= {
        *sandbox.child_env(Path("/w"), Path("/w/home")),
        *("CLICOLOR", "CLICOLOR_FORCE", "FORCE_COLOR", "GIT_PAGER", "MPLBACKEND", "PAGER", "PWD", "TERM"),
        "PYDEVD_USE_FRAME_EVAL",
    }


def test_the_kernel_cannot_point_the_graders_client_at_a_host_socket(tmp_path):
    from course.judge.kernel import SandboxedKernelManager

    target, notebook = tmp_path / "host.sock", tmp_path / "notebook"
    notebook.mkdir()
    host = socket.socket(socket.AF_UNIX)
    host.bind(str(target))
    host.listen()
    host.settimeout(15)

    async def run() -> bool:
        km = SandboxedKernelManager(kernel_name="python3")
        await km.start_kernel(cwd=str(notebook))
        client = km.client()  # the grader's client, as nbclient holds it
        client.start_channels()
        try:
            await client.wait_for_ready(timeout=120)
            ipc = str(km.work / "ipc")
            client.execute(
                f"import os\nfor name in os.listdir({ipc!r}):\n"
                f"    os.unlink(os.path.join({ipc!r}, name))\n"
                f"    os.symlink({str(target)!r}, os.path.join({ipc!r}, name))\n"
                "os._exit(0)\n"
            )
            try:  # zmq reconnects to the kernel's paths
                connection, _ = await asyncio.get_running_loop().run_in_executor(None, host.accept)
                connection.close()
                return True
            except OSError:
                return False
        finally:
            client.stop_channels()
            with contextlib.suppress(Exception):
                await km.shutdown_kernel(now=True)

    try:
        reached = asyncio.run(run())
    finally:
        host.close()
    assert not reached


@AS_ROOT
def test_an_interrupted_kernel_lives_on_and_nothing_outlives_its_shutdown(tmp_path):
    """nbgrader interrupts a cell that timed out: the kernel gets the KeyboardInterrupt and keeps running the
    notebook (jupyter_client's SIGINT to the launcher's group once killed bwrap and orphaned the looping kernel,
    spinning until the grading ended); after the shutdown no process of the kernel's uid is left."""
    from course.judge.kernel import SandboxedKernelManager

    (tmp_path / "notebook").mkdir()

    async def run() -> tuple[str, list[int]]:
        km = SandboxedKernelManager(kernel_name="python3")
        await km.start_kernel(cwd=str(tmp_path / "notebook"))
        try:
            client = km.client()
            client.start_channels()
            await client.wait_for_ready(timeout=120)
            client.execute("while True: pass")
            await asyncio.sleep(1.0)
            await km.interrupt_kernel()
            client.stop_channels()
            after = await kernel_run(km, "print('alive after the interrupt')", timeout=60)
        finally:
            await km.shutdown_kernel(now=False)
        return after, live_processes_of(km.owner)

    after, left = asyncio.run(run())
    assert "alive after the interrupt" in after and left == []


# ---------------------------------------------------------------- (e, c) the gradings' memory cgroups and bwrap's reaper


HOLD = """
import os, sys, time
fd = os.memfd_create("flash-attack")
os.posix_fallocate(fd, 0, int(sys.argv[1]))
print("ready", flush=True)
time.sleep(60)
"""


@pytest.fixture
def gradings_folder(monkeypatch):
    """A gradings' folder of the test's own (not the real gradings'), with a budget of 256 MiB."""
    if os.geteuid() != 0 or cgroup.unavailable():
        pytest.skip(f"no memory cgroup for gradings here: {cgroup.unavailable()}")
    monkeypatch.setattr(cgroup, "FOLDER", f"flash-course-test-{secrets.token_hex(4)}")
    monkeypatch.setattr(cgroup, "budget", lambda: 256 * MIB)
    cgroup.hierarchy.cache_clear()
    yield
    folder = cgroup.hierarchy()[0]
    cgroup.hierarchy.cache_clear()
    with contextlib.suppress(OSError):
        folder.rmdir()


def beside_a_holder(code: str, size: int) -> tuple[subprocess.CompletedProcess, bool]:
    """How `code` (a grading) ended after another grading took 192 MiB in a memfd (killed where that is past its
    share); whether that one still runs."""
    with running("bubblewrap", HOLD, str(192 * MIB), ready=("ready", "")) as holder:
        work = sandbox.workspace()
        try:
            argv, env = sandbox.command([sys.executable, "-c", code, str(size)], work, "bubblewrap")
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        finally:
            sandbox.kill_processes_of(sandbox.owner_of(work))
            sandbox.remove_workspace(work)
        return done, holder.poll() is None


def test_gradings_together_cannot_hold_more_memory_than_the_budget(gradings_folder):
    """(e) Every grading's cgroup had its own budget of half the host's RAM, and one submission alone runs two
    (its notebook's kernel, its judge's children; more under `course grade --jobs`): together they took the
    host's RAM, whose OOM killer then picks the judge. The gradings' folder bounds them all together."""
    done, holder_runs = beside_a_holder(MEMFD, 192 * MIB)
    second_held = done.returncode == 0 and json.loads(done.stdout.splitlines()[-1]) > 0
    # one of them was killed (or refused) inside the gradings' folder
    assert not (second_held and holder_runs)


def test_the_cgroups_of_gradings_that_ended_long_ago_are_removed(gradings_folder):
    """A worker killed at its job's timeout never released its cgroups: the next grader removes those that are
    empty and older than any grading, and leaves a recent one (a grading about to join it) alone."""
    folder = cgroup.hierarchy()[0]
    old, recent = cgroup.for_grading(sandbox.UID_BASE + 1), cgroup.for_grading(sandbox.UID_BASE + 2)
    os.utime(old, (time.time() - cgroup.STALE_SECONDS - 60,) * 2)
    cgroup.hierarchy.cache_clear()
    assert cgroup.hierarchy()[0] == folder and not old.exists() and recent.exists()
    cgroup.release(sandbox.UID_BASE + 2)


HOPPER = """
import json, os, sys, time
beat, deadline = sys.argv[1], time.monotonic() + 4
if os.fork() == 0:
    os.closerange(0, 3)
    while time.monotonic() < deadline:  # a new pid all the time: never the one a scan of /proc just found
        os.utime(beat)
        if os.fork():
            os._exit(0)
    os._exit(0)
print(json.dumps("left"))
"""


@AS_ROOT
@pytest.mark.parametrize("mechanism", ISOLATING)
def test_a_process_that_keeps_changing_its_pid_dies_with_its_grading(mechanism):
    """A process that forks and exits in a loop is never where the grader's scan of the uid's processes found it;
    it dies with its PID namespace once the grading's first process is gone (bwrap's reaper dies with bwrap)."""
    work = sandbox.workspace()
    owner = sandbox.owner_of(work)
    beat = work / "home" / "beat"
    beat.touch()
    os.chown(beat, owner, owner)
    try:
        assert sandboxed(mechanism, HOPPER, str(beat), work=work) == "left"
        sandbox.kill_processes_of(owner)
        before = beat.stat().st_mtime_ns
        time.sleep(0.3)
        beating = beat.stat().st_mtime_ns != before
        kept = cgroup.unavailable() is None and (cgroup.hierarchy()[0] / str(owner)).exists()
    finally:
        sandbox.kill_processes_of(owner)
        sandbox.remove_workspace(work)
    assert not beating and not kept


ALLOCATE = """
import json, sys
held = bytearray(int(sys.argv[1]))
held[::4096] = b"x" * len(held[::4096])  # touched: resident
print(json.dumps(len(held)))
"""


def test_a_grading_cannot_take_the_memory_of_concurrent_gradings(gradings_folder):
    """(e, c) Each grading could take the whole common budget: one holding it in memfds (in no process's RSS) left
    concurrent gradings none, and the OOM killer inside the gradings' folder killed their processes (the largest
    RSS), not the holder's. Now each grading's cgroup holds its share of the budget, the holder is killed in its
    own."""
    done, holder_runs = beside_a_holder(ALLOCATE, 96 * MIB)
    assert done.returncode == 0  # the innocent grading, within its share, was not killed
    assert not holder_runs  # 192 MiB is past a share of 128 MiB


def test_a_gradings_share_shrinks_with_the_jobs_at_once(gradings_folder, monkeypatch):
    """The pool tells its jobs how many run on this host at once; each grading's cgroup is its part of the budget."""
    limit = cgroup.hierarchy()[1]
    assert runner.job_env(None, Path("/tmp"), None, at_once=4)[cgroup.AT_ONCE_ENV] == "4"
    monkeypatch.setenv(cgroup.AT_ONCE_ENV, "4")
    group = cgroup.for_grading(sandbox.UID_BASE + 3)
    try:
        assert int((group / limit).read_text()) == 256 * MIB // 8  # 4 jobs, a kernel and a judge each
    finally:
        cgroup.release(sandbox.UID_BASE + 3)


CGROUP_WRITES = """
import json, os, sys
own, folder = sys.argv[1], sys.argv[2]
done = []
for path, text in (
    (os.path.join(own, sys.argv[3]), str(1 << 50)),  # its own limit raised
    (os.path.join(folder, sys.argv[3]), str(1 << 50)),  # all gradings' limit raised
    (os.path.join(os.path.dirname(folder), "cgroup.procs"), "0"),  # out of its cgroup
    (os.path.join(folder, "cgroup.procs"), "0"),
    (os.path.join(own, "cgroup.event_control"), "0 0"),  # world-writable in cgroup v1
):
    try:
        with open(path, "w") as file:
            file.write(text)
        done.append(path)
    except OSError:
        pass
try:
    os.mkdir(os.path.join(own, "escape"))
    done.append("mkdir")
except OSError:
    pass
print(json.dumps(done))
"""


@AS_ROOT
def test_the_gpu_sandbox_cannot_leave_or_enlarge_its_memory_cgroup(monkeypatch):
    """(e) With a GPU the host's /sys is bound read-only into the sandbox, its cgroup files among them."""
    if cgroup.unavailable():
        pytest.skip(f"no memory cgroup for gradings here: {cgroup.unavailable()}")
    monkeypatch.setattr(sandbox, "gpu_devices", lambda: [Path("/dev/null")])  # as on a GPU host
    folder, limit = cgroup.hierarchy()
    work = sandbox.workspace()
    own = folder / str(sandbox.owner_of(work))
    try:
        done = sandboxed("bubblewrap", CGROUP_WRITES, str(own), str(folder), limit, work=work)
    finally:
        sandbox.kill_processes_of(sandbox.owner_of(work))
        sandbox.remove_workspace(work)
    assert done == []


def test_a_notebook_cannot_fill_the_graders_memory_with_its_output(tmp_path, monkeypatch):
    """(e) nbclient keeps every output of a cell in the grader's memory (out of the sandbox's cgroup) until the
    notebook ends: a cell printing in a loop until its timeout (minutes) held gigabytes there and the host's OOM
    killer picked the judge. The outputs are bounded as they come, as `outputs.sanitize` bounds them later."""
    import nbformat

    from course.judge import kernel, outputs

    monkeypatch.setattr(outputs, "MAX_CELL", MIB)
    monkeypatch.setattr(kernel, "HELD_OUTPUT", 4 * MIB)
    flood = "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(32):\n    sys.stdout.write(chunk)\n    sys.stdout.flush()"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(flood)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    kernel.SandboxedExecute(timeout=60).preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    held = nb.cells[0].outputs
    assert sum(map(outputs.size, held)) <= 5 * MIB  # 32 MiB printed
    assert any("output is over its limit" in output.get("text", "") for output in held)


GRADER_GROWTH = """
import json, logging, sys
import nbformat
from course.judge import kernel
kernel.MAX_MESSAGE = 16 << 20
cells = [sys.argv[2], "print('after')"]
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}

def memory(field):
    return next(int(line.split()[1]) << 10 for line in open("/proc/self/status") if line.startswith(field + ":"))

class Logged(logging.Handler):  # the bytes nbclient logs (in a worker: the job's log, held while nbgrader runs)
    size = 0

    def emit(self, record):
        self.size += len(record.getMessage())


logged = Logged()
# the peak so far no longer counts: the imports', and getrusage's maxrss even holds the exec'ing pytest's (~1 GB in CI)
with open("/proc/self/clear_refs", "w") as peak:
    peak.write("5")
before, error = memory("VmRSS"), None
try:
    # a loaded host takes seconds to work through a flood: the wait for its last output is not what is tested here
    executor = kernel.SandboxedExecute(timeout=120, iopub_timeout=60, allow_errors=True)
    executor.log.addHandler(logged)
    executor.preprocess(nb, {"metadata": {"path": sys.argv[1]}})
except Exception as raised:
    error = type(raised).__name__
grown = memory("VmHWM") - before
texts = [o.get("text", "") for o in nb.cells[0].outputs]
after = [o.get("text", "") for o in nb.cells[1].outputs]
print(json.dumps({"grown": grown, "error": error, "printed": sum(map(len, texts)), "texts": texts, "after": after,
                  "logged": logged.size}))
"""


ONE_HUGE_WRITE = "import sys\nsys.stdout.write('x' * (256 << 20))\nsys.stdout.flush()"


def grader_growth(tmp_path: Path, cell: str) -> dict:
    """What GRADER_GROWTH saw of a notebook whose one cell is `cell`, once it checked the grader grew under 64 MiB."""
    done = subprocess.run(
        [sys.executable, "-c", GRADER_GROWTH, str(tmp_path), cell],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["grown"] < 64 * MIB, done.stderr[-2000:]
    return seen


def test_one_huge_message_from_the_kernel_never_reaches_the_graders_memory(tmp_path):
    """(e) Cell outputs are bounded as they arrive, but one message is received whole before anything reads it:
    a kernel printing 256 MiB in one write held that, and three copies of it decoding (800 MB), in the grader's
    memory, outside every cgroup. The grader's sockets dropped it, and the cell waited for output that never came
    until its timeout. The relay receives it, in the grading's memory cgroup, and refuses it: the cell says so, and
    the next one runs."""
    seen = grader_growth(tmp_path, ONE_HUGE_WRITE)
    assert "over the grader's bounds" in "".join(seen["texts"]) and seen["error"] is None
    assert seen["after"] == ["after\n"]


def test_a_notebooks_working_copy_goes_as_soon_as_it_ran(tmp_path):
    """A worker grades notebook after notebook, and each kernel's manager lived on until the worker ended: every
    working copy (a tmpfs in RAM, its Triton cache) stayed until then, and its log after that."""
    import nbformat

    from course.judge import kernel

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('ran')")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    executor = kernel.SandboxedExecute(timeout=60)
    executor.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    assert nb.cells[0].outputs[0]["text"] == "ran\n"
    assert not executor.manager.work.exists()
    # nor a file of it the grader holds open: the kernel's log (what it wrote to its stdout, up to the whole tmpfs)
    # kept its pages in memory, charged to the gradings' common budget, until the manager was collected
    held = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own
            held.append(os.readlink(f"/proc/self/fd/{fd}"))
    assert not [path for path in held if path.endswith("/kernel.log (deleted)")]  # its detached filesystem's


@AS_ROOT
def test_a_link_planted_among_the_job_folders_unmounts_no_running_job(tmp_path, monkeypatch):
    """(c) The job folders lie in the shared temp folder, where any local account (a student on the hub's host) may
    make a `course-job-<a dead pid>-x` of its own: a link to a running job's folder (or to /) made the next grader's
    sweep of abandoned jobs resolve it and unmount that job's working copies under its sandboxes."""
    if not sandbox.workspaces_bounded():
        pytest.skip("no tmpfs for working copies here: mounting is refused (course check warns)")
    running_job = tmp_path / f"{runner.JOB_PREFIX}{os.getpid()}-running"
    running_job.mkdir()
    monkeypatch.setattr(sandbox.tempfile, "tempdir", str(running_job))
    work = sandbox.workspace()
    monkeypatch.setattr(sandbox.tempfile, "tempdir", str(tmp_path))
    never_a_pid = int(Path("/proc/sys/kernel/pid_max").read_text()) + 1
    planted = tmp_path / f"{runner.JOB_PREFIX}{never_a_pid}-planted"
    planted.symlink_to(running_job)
    os.lchown(planted, sandbox.UID_BASE - 1, sandbox.UID_BASE - 1)  # another account's
    try:
        runner.sweep_abandoned_jobs()
        still_mounted = os.path.ismount(work)
    finally:
        sandbox.remove_workspace(work)
    assert still_mounted and running_job.is_dir()


@AS_ROOT
def test_working_copies_under_a_folder_with_odd_characters_are_unmounted(tmp_path, monkeypatch):
    """/proc/self/mountinfo writes a space, a tab, a newline and a backslash of a mount point as octal escapes (and
    any other byte as it is): only the space was read back, so a working copy under an instructor's TMPDIR with a
    tab or a backslash stayed mounted, and any mount on the host whose name is not UTF-8 crashed the grader."""
    if not sandbox.workspaces_bounded():
        pytest.skip("no tmpfs for working copies here: mounting is refused (course check warns)")
    other = tmp_path / os.fsdecode(b"not-utf8-\xff")
    other.mkdir()
    subprocess.run(
        [sandbox.tool("mount"), "-t", "tmpfs", "-o", "size=1m", "elsewhere", str(other)], check=True
    )
    odd = tmp_path / "a b\tc\\d\ne"
    odd.mkdir()
    monkeypatch.setattr(sandbox.tempfile, "tempdir", str(odd))
    work = sandbox.workspace()
    try:
        assert os.path.ismount(work)
        sandbox.unmount_under(tmp_path)
        assert not os.path.ismount(work) and os.path.ismount(other)  # another filesystem is left alone
    finally:
        sandbox.remove_workspace(work)
        subprocess.run([sandbox.tool("umount"), "--lazy", str(other)], check=True)


CAPACITY = """
import json, os
found = os.statvfs(os.environ["TRITON_CACHE_DIR"])
print(json.dumps(found.f_blocks * found.f_frsize))
"""


@AS_ROOT
def test_the_judge_childrens_triton_cache_cannot_take_more_disk_than_its_budget(tmp_path, monkeypatch):
    """(e) The Triton cache a notebook's judge children share was a folder of the host's disk, bounded only by the
    judge's 2-second look while it waits for a call's answer (a thread the student's module started writes on
    between calls). It is a tmpfs of TMPFS_BYTES, as a working copy is, and goes with its mount when the sharing ends."""
    from course.judge import preprocessor

    if not sandbox.workspaces_bounded():
        pytest.skip("no tmpfs for working copies here: mounting is refused (course check warns)")
    monkeypatch.setattr(sandbox.tempfile, "tempdir", str(tmp_path))
    owner, cache = preprocessor.new_share()
    work = sandbox.workspace(owner=owner)
    try:
        capacity = sandboxed("bubblewrap", CAPACITY, work=work, triton_cache=cache)
    finally:
        sandbox.remove_workspace(work)
        preprocessor.end_sharing(owner, cache)
    assert capacity <= sandbox.TMPFS_BYTES
    assert not cache.exists() and not os.listdir(tmp_path)


MANY_FRAMES = """
kernel = get_ipython().kernel
frame = b"x" * (8 << 20)  # under MAX_MESSAGE (16 MiB in this test)
kernel.session.send(kernel.iopub_socket, "stream", {"name": "stdout", "text": "y"}, buffers=[frame] * 32)
"""
SMALL_BUT_DEEP = """
kernel = get_ipython().kernel
content = b'{"name": "stdout", "text": "y", "junk": [' + b"[]," * (4 << 20) + b"[]]}"  # 12 MiB: 4 million lists
kernel.session.send(kernel.iopub_socket, "stream", content, parent=kernel.get_parent())
"""


def test_the_kernels_messages_never_grow_the_graders_memory_past_the_cap(tmp_path):
    """(e) libzmq's MAXMSGSIZE bounds one frame of a message, not how many frames it has: one message of 32 buffers
    of 8 MiB each was held whole in the grader's memory, outside every cgroup, before anything read it; and a message
    under the cap grew ~25 times as the grader parsed its JSON (12 MiB of empty lists: ~300 MiB). A relay in the
    grading's memory cgroup (`course.judge.relay`) receives the kernel's messages, refuses both, and the cell says so
    in its output; the next cell runs as usual. Both attacks in one cell: one kernel start (~10 s) for the two."""
    seen = grader_growth(tmp_path, MANY_FRAMES + SMALL_BUT_DEEP)
    refused = [re.search(r"\((\d+) frames, (\d+) bytes\)", text) for text in seen["texts"]]
    frames, sizes = zip(*[(int(found[1]), int(found[2])) for found in refused if found], strict=True)
    assert frames[0] > 32 and sizes[0] > 32 * 8 * MIB and sizes[1] > 12 * MIB  # the two messages, refused
    assert seen["after"] == ["after\n"], seen["error"]


BESIDE_OUTPUTS = """
kernel = get_ipython().kernel
junk = "m" * (1 << 20)
widget = {"_model_module": "junk", "_model_name": "JunkModel"}
for n in range(48):
    for kind, content in [
        ("display_data", {"data": {"text/plain": "d"}, "metadata": {"junk": junk}}),
        ("comm_open", {"comm_id": f"c{n}", "target_name": "jupyter.widget", "data": {"state": {**widget, "junk": junk}}}),
        ("display_data", {"data": {"text/plain": "d"}, "metadata": {}, "transient": {"display_id": f"d{n}" + junk}}),
        ("unheard_of_" + junk, {}),
    ]:
        kernel.session.send(kernel.iopub_socket, kind, content, parent=kernel.get_parent())
"""


def test_output_metadata_widget_state_and_display_ids_never_grow_the_graders_memory(tmp_path):
    """(e) The grader counted a cell's output data as it came, but not the outputs' metadata, widget (comm) state or
    the ids of displays it keeps to update them: one submission held +1.5 GiB in the grader and scored full marks.
    Each is charged to the notebook's bytes with its outputs (`SandboxedExecute.process_message`); past them the
    cell says what was dropped. And a message of a kind nbclient does not handle was logged with its type in full
    (the job's log, held in memory while nbgrader runs): it is dropped. Four kinds of 48 messages of 1 MiB each, in
    one kernel start."""
    seen = grader_growth(tmp_path, BESIDE_OUTPUTS)
    assert any("over the grader's limit for this notebook" in text for text in seen["texts"])
    assert seen["logged"] < MIB
    assert seen["after"] == ["after\n"], seen["error"]


def test_a_kernel_whose_relay_died_is_a_dead_kernel(tmp_path):
    """(e) The relay is the kernel's only way to the grader: one its cgroup's OOM killer took leaves the kernel
    talking to no one. The grader kills that kernel, and the notebook ends as a dead kernel's does (its shutdown
    waited on the kernel forever while the relay counted as the kernel's life)."""
    import threading

    import nbformat
    from nbclient.exceptions import DeadKernelError

    from course.judge import kernel

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import time\ntime.sleep(120)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    executor = kernel.SandboxedExecute(timeout=300)

    def kill_the_relay():
        while getattr(getattr(executor, "manager", None), "relay", None) is None:  # until the kernel runs
            time.sleep(0.1)
        time.sleep(2)
        executor.manager.relay.kill()

    threading.Thread(target=kill_the_relay, daemon=True).start()
    started = time.monotonic()
    with pytest.raises(DeadKernelError):
        executor.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    assert time.monotonic() - started < 100 and not executor.manager.work.exists()


def test_a_grading_past_its_share_cannot_spill_into_swap(gradings_folder):
    """(e) On a host with swap, a cgroup at its memory limit has its pages swapped out rather than its processes
    killed: a grading could hold the host's whole swap beyond its share (a memfd swaps as well as anything). Where
    the kernel counts swap, the cgroups bound RAM and swap together (v1) or allow no swap (v2)."""
    folder, limit = cgroup.hierarchy()
    swap = {"memory.limit_in_bytes": "memory.memsw.limit_in_bytes", "memory.max": "memory.swap.max"}[limit]
    if not (folder / swap).exists():
        pytest.skip("the kernel does not count swap in cgroups here (swapaccount=0)")
    group = cgroup.for_grading(sandbox.UID_BASE + 4)
    try:
        bounds = [((where / limit).read_text(), (where / swap).read_text()) for where in (folder, group)]
    finally:
        cgroup.release(sandbox.UID_BASE + 4)
    allowed = [(str(256 * MIB), str(256 * MIB)), (str(128 * MIB), str(128 * MIB))]
    if limit == "memory.max":
        allowed = [(ram, "0") for ram, _ in allowed]
    assert [(ram.strip(), swapped.strip()) for ram, swapped in bounds] == allowed


MANY_FILES = """
import json, os, sys
made = 0
try:
    while made < int(sys.argv[2]):
        os.close(os.open(os.path.join(sys.argv[1], str(made)), os.O_CREAT | os.O_WRONLY, 0o600))
        made += 1
except OSError:
    pass
print(json.dumps(made))
"""


@AS_ROOT
def test_a_working_copy_cannot_hold_more_files_than_the_grader_walks_quickly():
    """(e) The grader walks a working copy every QUOTA_POLL seconds while its sandbox runs, and removes it file by
    file: a tmpfs had room for millions of empty files (300,000 took the grader 4 s to walk and 4 s to remove),
    which kept the grader's thread busy. The working copies' filesystems hold at most WORKSPACE_FILES files."""
    if not sandbox.workspaces_bounded():
        pytest.skip("no tmpfs for working copies here: mounting is refused (course check warns)")
    work = sandbox.workspace()
    try:
        made = sandboxed("bubblewrap", MANY_FILES, str(work / "home"), str(70_000), work=work)
    finally:
        sandbox.kill_processes_of(sandbox.owner_of(work))
        sandbox.remove_workspace(work)
    assert made < 70_000


@AS_ROOT
@pytest.mark.parametrize("mechanism", ISOLATING)
def test_a_working_copy_of_the_sandboxs_own_uid_is_read_only_but_its_writable_folders(mechanism):
    """(b) A grader that is not root runs its sandboxes as its own uid, which owns the working copy: the fallback
    bound the working copy back writable, so the student's code could put links where the grader writes next (the
    fallback's spec, the child's log, the judge's inputs) and the grader wrote through them into its own files (the
    gradebook). The working copy is read-only in the sandbox but for its writable folders, as under bubblewrap."""
    work = sandbox.workspace()
    owner = sandbox.owner_of(work)
    os.chown(work, owner, owner)  # as a grader that is not root has it: the sandbox's uid is the grader's own
    try:
        written = sandboxed(mechanism, WRITES, work=work)
        wrote_home = sandboxed(mechanism, "print(open('home/mine', 'w').write('1'))", work=work)
    finally:
        sandbox.kill_processes_of(owner)
        sandbox.remove_workspace(work)
    assert written == [] and wrote_home == 1


def test_a_socket_swapped_for_a_link_while_the_grader_moves_it_is_dropped(tmp_path, monkeypatch):
    """The grader moves the kernel's sockets out of the folder the kernel writes once it finds them there (a look,
    then a rename): a kernel that put a link in a socket's place between the two had the grader move its link into
    the grader's own folder, and the grader's client connect through it to a host socket. Here the kernel always
    wins that race; the grader checks what it moved, where only it writes."""
    from course.judge import kernel

    work, host = tmp_path / "work", tmp_path / "host.sock"
    (work / "ipc").mkdir(parents=True)
    ports = {"shell_port": 1, "iopub_port": 2, "stdin_port": 3, "control_port": 4, "hb_port": 5}
    bound = [socket.socket(socket.AF_UNIX) for _ in ports]
    for each, port in zip(bound, ports.values(), strict=True):
        each.bind(str(work / "ipc" / f"kernel-{port}"))
    rename = os.rename

    def won_the_race(source, target):
        os.unlink(source)
        os.symlink(host, source)
        rename(source, target)

    monkeypatch.setattr(kernel.os, "rename", won_the_race)
    manager = SimpleNamespace(work=work, ip=str(work / "ipc" / "kernel"), **ports)
    try:
        asyncio.run(kernel.SandboxedKernelManager.guard_sockets(manager, wait=1))
    finally:
        for each in bound:
            each.close()
    assert not any((work / "sockets" / f"kernel-{port}").is_symlink() for port in ports.values())


WORKING_COPY_WRITES = """
import json, os
done = []
for name, write in (
    ("flash-attack", lambda path: open(path, "x").close()),
    ("in", os.mkdir),
    ("sandbox.json", lambda path: os.symlink("/etc/hostname", path + ".new") or os.replace(path + ".new", path)),
    ("home/mine", lambda path: open(path, "x").close()),
):
    try:
        write(name)
        done.append(name)
    except OSError:
        pass
print(json.dumps(done))
"""


@AS_ROOT
def test_the_unprivileged_fallbacks_working_copy_is_read_only_but_its_writable_folders(monkeypatch):
    """The same through the fallback as a grader that is not root starts it (a user namespace of its own, whose
    mounts are locked), which CI, running as root, never takes otherwise (here its processes are root's, so only
    the working copy's mounts stop them)."""
    assert sandboxed_by_an_unprivileged_grader("namespaces", WORKING_COPY_WRITES, monkeypatch) == [
        "home/mine"
    ]
