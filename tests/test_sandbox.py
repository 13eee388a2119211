"""The sandbox and the judge's end of the child, attacked as a hostile student would: each test is a mechanism
that leaked before the allow-list sandbox and the descriptor-based reading of answers."""

from __future__ import annotations

import csv
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
import torch
from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT

from course import ROOT, cli, selftest
from course.grading import submissions
from course.judge import sandbox
from course.judge.child import CallFailed, Child
from course.layout import COURSE, Course

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux namespaces")
ISOLATING = [m for m in sandbox.MECHANISMS if m != "none"]


def test_ci_has_the_allow_list_sandbox():
    works, why = sandbox.probe("bubblewrap")
    assert works, why  # CI installs bubblewrap (tests/setup_sandbox.sh); the GPU host carries its .deb
    assert sandbox.choose("auto")[0] == "bubblewrap"


def test_no_isolation_is_refused_unless_asked_for(monkeypatch):
    monkeypatch.setattr(sandbox, "probe", lambda mechanism: (False, f"{mechanism} missing"))
    with pytest.raises(ValueError, match="--no-sandbox"):
        sandbox.choose("auto")
    assert sandbox.choose("none")[0] == "none"


@pytest.fixture
def without_bubblewrap(tmp_path, monkeypatch):
    """A host where bubblewrap does not work: a `bwrap` that fails, first on the PATH of the grader and of every
    process it starts."""
    works, why = sandbox.probe("namespaces")
    if not works:
        pytest.skip(f"namespaces: {why}")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
    )
    (tmp_path / "bin" / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("FLASH_COURSE_ALLOW_WEAKER_SANDBOX", raising=False)
    sandbox.probe.cache_clear()
    yield
    sandbox.probe.cache_clear()


def test_grading_refuses_the_weaker_sandbox_unless_the_instructor_names_it(
    without_bubblewrap, tmp_path, monkeypatch, capsys
):
    """Principle 9 of issue 45: where bubblewrap did not work, `course grade` graded under the deny-list fallback
    without being asked (where a student's code read a private overlay and another student's answer kept outside
    the course). It refuses, in both languages, naming the flag; told `--allow-weaker-sandbox`, it grades there."""
    checkout = tmp_path / "checkout"
    for part in ("source", "release"):
        shutil.copytree(FIXTURE / part, checkout / part)
    submissions.write_student(
        checkout / "release" / UNIT, checkout / "source" / UNIT, tmp_path / "class" / "alice" / UNIT, {}
    )
    course = Course(tmp_path / "semester", FIXTURE_COURSE.wrong, code=checkout)
    monkeypatch.setattr(cli, "_course", lambda db=None: course)

    assert cli.main(["grade", str(tmp_path / "class")]) == 2
    said = capsys.readouterr().out
    assert "拒绝评分" in said and "grading refused" in said and "--allow-weaker-sandbox" in said, said
    assert not (course.root / "grades.csv").exists()

    assert cli.main(["grade", str(tmp_path / "class"), "--allow-weaker-sandbox"]) == 0
    (alice,) = csv.DictReader((course.root / "grades.csv").open(encoding="utf-8"))
    assert (
        alice["score"] == alice["max_score"]
    )  # the notebook's kernel started: "auto" would have refused there


def test_the_selftest_refuses_the_weaker_sandbox_before_grading(without_bubblewrap):
    with pytest.raises(ValueError, match="--allow-weaker-sandbox"):
        selftest.run(COURSE, COURSE.units()[:1])


def test_the_weaker_sandbox_may_be_named_in_the_environment(without_bubblewrap, monkeypatch):
    """For every command and the processes it starts (the selftest has no flag)."""
    with pytest.raises(ValueError, match=sandbox.ALLOW_WEAKER_ENV):
        sandbox.choose("auto")
    monkeypatch.setenv(sandbox.ALLOW_WEAKER_ENV, "1")
    assert sandbox.choose("auto")[0] == "namespaces"


def run_sandboxed(mechanism: str, code: str, *args: str, owner: int | None = None) -> str:
    work = sandbox.workspace(owner=owner)
    try:
        argv, env = sandbox.command([sys.executable, "-c", textwrap.dedent(code), *args], work, mechanism)
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()
    finally:
        sandbox.kill_processes_of(sandbox.owner_of(work))  # and its memory cgroup
        sandbox.remove_workspace(work)


@pytest.fixture
def secret_outside(tmp_path_factory):
    """A secret file in a folder of the host that no deny-list names (an instructor's private overlay)."""
    folder = Path("/opt") / f"flash-course-private-{secrets.token_hex(4)}"
    if os.geteuid() != 0:
        folder = tmp_path_factory.mktemp("private")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "salt").write_text("s3cr3t")
    (folder / "salt").chmod(0o644)
    yield folder / "salt"
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_the_allow_list_shows_nothing_of_the_host_but_the_system_and_the_environment(
    secret_outside, mechanism
):
    """Under both mechanisms (the fallback's deny-list showed the overlay, every top-level folder and all of /etc)."""
    if mechanism == "namespaces" and not sandbox.probe(mechanism)[0]:
        pytest.skip(f"namespaces: {sandbox.probe(mechanism)[1]}")
    seen = run_sandboxed(
        mechanism,
        """
        import os, sys
        print(os.path.exists(sys.argv[1]), os.path.exists(sys.argv[2]))
        print(*sorted(os.listdir("/")))
        print(*sorted(os.listdir("/etc")))
        """,
        str(secret_outside),
        str(ROOT / "course"),
    )
    hidden, top, etc = seen.splitlines()
    assert hidden == "False False"  # an overlay the old deny-list never named, and the course
    environment = {p.parts[1] for p in [*sandbox.python_paths(), sandbox.temp_folder()]}
    system = {Path(p).name for p in sandbox.SYSTEM} | {"dev", "etc", "proc", "sys", "tmp"}
    assert set(top.split()) <= system | environment
    assert set(etc.split()) <= {*sandbox.SYSTEM_ETC, "passwd"}


PROBE = """
import os, socket, sys
print("course", os.path.exists(sys.argv[1]))
print("sibling", os.path.exists(sys.argv[2]))
print("root", os.getuid() == 0)
try:
    os.kill(int(sys.argv[3]), 0)
    print("signal", True)
except OSError:
    print("signal", False)
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[4])), timeout=2)
    print("network", True)
except OSError:
    print("network", False)
"""


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_the_sandbox_hides_the_course_other_folders_processes_and_network(mechanism):
    server = socket.create_server(("127.0.0.1", 0))
    sibling = sandbox.workspace("course-sibling-")
    try:
        out = run_sandboxed(
            mechanism,
            PROBE,
            str(ROOT / "course"),
            str(sibling),
            str(os.getpid()),
            str(server.getsockname()[1]),
        )
    finally:
        server.close()
        sandbox.remove_workspace(sibling)
    seen = dict(line.split() for line in out.splitlines())
    assert seen == {
        "course": "False",
        "sibling": "False",
        "root": "False",
        "signal": "False",
        "network": "False",
    }


SHARED_STATE = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
key = int(sys.argv[1])
if sys.argv[2] == "write":
    for folder in ("/dev/shm", "/var/tmp", "/tmp"):
        if os.path.isdir(folder):
            open(os.path.join(folder, f"left-{key}"), "w").write("from the last student")
    segment = libc.shmget(key, 4096, 0o1666)  # IPC_CREAT | rw for all
    print("created", segment >= 0)
else:
    found = [f for f in ("/dev/shm", "/var/tmp", "/tmp") if os.path.exists(os.path.join(f, f"left-{key}"))]
    print("files", ",".join(found) or "-")
    print("segment", libc.shmget(key, 0, 0) >= 0)
"""


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_nothing_one_student_leaves_reaches_the_next(mechanism):
    key = 0x5EC0000 + secrets.randbelow(1 << 16)
    assert run_sandboxed(mechanism, SHARED_STATE, str(key), "write") == "created True"
    try:
        seen = run_sandboxed(mechanism, SHARED_STATE, str(key), "read")
        assert seen.splitlines() == ["files -", "segment False"]
    finally:
        for folder in ("/dev/shm", "/var/tmp", "/tmp"):
            Path(folder, f"left-{key}").unlink(missing_ok=True)


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_each_grading_has_its_own_uid_and_limits(mechanism):
    code = """
    import os, resource
    names = ["RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CPU", "RLIMIT_CORE"]
    print(os.getuid(), *(resource.getrlimit(getattr(resource, n))[0] for n in names))
    """
    first, second = (run_sandboxed(mechanism, code).split() for _ in range(2))
    assert [int(v) for v in first[1:]] == [sandbox.LIMITS[k] for k in ("fsize", "nofile", "cpu", "core")]
    if os.geteuid() == 0:
        assert first[0] != second[0] and int(first[0]) >= sandbox.UID_BASE  # a fresh uid per grading
    work = sandbox.workspace()
    try:
        writable = [work / name for name in ("home", "out")]
        assert all(p.stat().st_mode & 0o777 == 0o700 for p in writable)  # nothing world-writable on the host
    finally:
        sandbox.remove_workspace(work)


FORGER = """
import os
import utils.judged.tensor_files as files

SECRET = {secret!r}


def forged_save(tensors, path, kind={kind!r}):
    name = os.path.basename(path)
    if kind == "symlink":
        os.symlink(SECRET, path)
        header = '{{"t0": {{"dtype": "uint8", "shape": [%d], "offset": 0, "bytes": %d}}}}' % ((len(open(SECRET).read()),) * 2) if os.path.exists(SECRET) else '{{"t0": {{"dtype": "uint8", "shape": [6], "offset": 0, "bytes": 6}}}}'
    elif kind == "fifo":
        os.mkfifo(path)
        header = "{{}}"
    elif kind == "sparse":
        with open(path, "wb") as f:
            f.truncate(768 << 20)
        header = '{{"t0": {{"dtype": "uint8", "shape": [%d], "offset": 0, "bytes": %d}}}}' % ((768 << 20,) * 2)
    else:  # a header that is JSON but not a header
        open(path, "wb").close()
        header = '{{"t0": [1, 2, 3]}}'
    open(f"{{path}}.json", "w").write(header)


def f(x):
    if x.numel() == 1:
        files.save = forged_save
    return x
"""


@pytest.mark.parametrize("kind", ["symlink", "fifo", "sparse", "malformed"])
def test_the_judge_never_follows_or_trusts_what_the_child_wrote(tmp_path, kind):
    secret = tmp_path / "grades.csv"
    secret.write_text("secret")
    secret.chmod(0o600)
    body = FORGER.format(secret=str(secret), kind=kind)
    child = Child(f"import torch\n{body}", {}, sandbox.choose("auto")[0])
    try:
        with pytest.raises(CallFailed, match="unreadable"):
            child.call(
                "f", torch.ones(1), timeout=60
            )  # before: the secret's bytes, a hang, a huge read, a crash
        child.stop()  # a fresh child: the next call is honest again
        assert torch.equal(child.call("f", torch.arange(3.0)).result, torch.arange(3.0))
    finally:
        child.close()


def test_the_kernels_copy_of_a_submission_leaves_links_and_fifos_out(tmp_path, secret_outside):
    folder = tmp_path / "submission"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "table.csv").write_text("1,2")
    (folder / "notes.txt").symlink_to(secret_outside)
    (folder / "linked").symlink_to(secret_outside.parent)
    os.mkfifo(folder / "pipe")
    (folder / "answer.ipynb").write_text("{}")
    sandbox.copy_plain_tree(folder, tmp_path / "copy", os.getuid())
    copied = sorted(str(p.relative_to(tmp_path / "copy")) for p in (tmp_path / "copy").rglob("*"))
    assert copied == ["data", "data/table.csv"]


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_a_working_copy_in_a_private_job_folder_is_reachable_inside(tmp_path, monkeypatch, mechanism):
    """The grader keeps each job's sandboxes in a folder of its own (mode 0700): the sandbox's uid still reaches
    its working copy (bwrap makes missing folders 0700 unless told otherwise)."""
    private = tmp_path / "course-job-1-x"
    private.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    assert run_sandboxed(
        mechanism, "import os; print(os.path.isdir(os.getcwd()), os.access('.', os.R_OK))"
    ) == ("True True")


def test_a_child_that_fills_the_disk_is_stopped_and_its_files_removed(monkeypatch):
    monkeypatch.setattr(sandbox, "DISK_QUOTA", 8 << 20)
    monkeypatch.setattr(sandbox, "QUOTA_POLL", 0.2)
    body = "import os, time\n\ndef fill(x):\n    for i in range(64):\n        with open(os.path.join(os.environ['HOME'], f'f{i}'), 'wb') as f:\n            f.write(os.urandom(1 << 20))\n    time.sleep(60)\n    return x"
    child = Child(f"import torch\n{body}", {}, sandbox.choose("auto")[0])
    try:
        with pytest.raises(CallFailed, match="MiB of files"):
            child.call("fill", torch.ones(1), timeout=50)
        assert sandbox.bytes_used(child.work) < 8 << 20
    finally:
        child.close()


def test_a_kernel_that_fills_the_disk_is_killed(tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    from course.judge.kernel import SandboxedKernelManager

    monkeypatch.setattr(sandbox, "DISK_QUOTA", 8 << 20)
    monkeypatch.setattr(sandbox, "QUOTA_POLL", 0.2)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    fill = "import os, time\nfor i in range(64):\n    open(f'f{i}', 'wb').write(os.urandom(1 << 20))\ntime.sleep(60)"
    nb.cells = [nbformat.v4.new_code_cell(fill)]
    client = NotebookClient(
        nb,
        kernel_manager_class=SandboxedKernelManager,
        timeout=50,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    with pytest.raises(DeadKernelError):
        client.execute()


def test_the_kernels_copy_of_a_submission_stops_at_its_files_budget(tmp_path):
    """A working copy's filesystem holds at most WORKSPACE_FILES files: a submission of more is copied in part (the
    kernel still starts), never failing the copy half-way."""
    folder = tmp_path / "submission"
    folder.mkdir()
    for index in range(5):
        (folder / f"{index}.txt").write_text("x")
    sandbox.copy_plain_tree(folder, tmp_path / "copy", os.getuid(), entries=3)
    assert len(list((tmp_path / "copy").iterdir())) == 2  # the folder itself and two files


def test_the_gradings_budget_is_a_share_of_a_containers_memory_limit(tmp_path, monkeypatch):
    """A grader in a container limited below the host's RAM: a budget of the host's RAM let the gradings together
    pass the container's limit, whose OOM killer then picks any process in it (the judge, another grading)."""
    from course.judge import cgroup

    (tmp_path / "memory.limit_in_bytes").write_text(f"{1 << 30}\n")
    monkeypatch.setattr(cgroup, "V1", tmp_path)
    monkeypatch.setattr(cgroup, "V2", tmp_path / "absent")
    assert cgroup.budget() == int(cgroup.MEMORY_SHARE * (1 << 30))
    (tmp_path / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # no limit: the host's RAM
    assert cgroup.budget() == int(
        cgroup.MEMORY_SHARE * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    )
