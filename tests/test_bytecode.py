"""The environment's bytecode, compiled by the grader for its sandboxes (`course.judge.bytecode`): a sandboxed
process loads it and can write none of it, so no student's code can plant bytecode that another's imports."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import threading
import weakref
from pathlib import Path

import pytest

from course.grading import overlay
from course.judge import bytecode, sandbox

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux namespaces")
SOURCE = "VALUE = 42\n"


@pytest.fixture
def compiled(tmp_path, monkeypatch):
    """(module source, the grader's bytecode folder) of an environment of one module shipped without bytecode;
    the source then changes to VALUE = 43 with its size and time kept, so a process that prints 42 loaded the
    folder's bytecode."""
    environment = tmp_path / "environment"
    environment.mkdir()
    source = environment / "sample_module.py"
    source.write_text(SOURCE)
    monkeypatch.setattr(bytecode, "FOLDER", tmp_path / "bytecode" / sys.implementation.cache_tag)
    monkeypatch.setattr(bytecode, "beside_source", lambda module: False)
    monkeypatch.setattr(bytecode, "environment_folders", lambda: [environment])
    bytecode.prepare.cache_clear()
    folder = bytecode.prepare()
    bytecode.prepare.cache_clear()
    stamp = source.stat()
    source.write_text(SOURCE.replace("42", "43"))
    os.utime(source, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(folder))
    monkeypatch.setenv("PYTHONPATH", str(environment))  # the sandbox binds PYTHONPATH folders read-only
    return source, folder


def bytecode_of(source: Path, folder: Path) -> Path:
    """Where Python reads `source`'s bytecode under the prefix `folder`."""
    return folder / source.parent.relative_to("/") / f"{source.stem}.{sys.implementation.cache_tag}.pyc"


def test_the_grader_compiles_into_its_own_folder_and_nowhere_else(compiled):
    source, folder = compiled
    assert folder == bytecode.FOLDER and bytecode.in_use() == folder
    assert bytecode_of(source, folder).is_file()
    assert not (source.parent / "__pycache__").exists()
    assert not folder.stat().st_mode & 0o022


def test_a_second_grader_compiles_nothing_until_the_environment_changes(compiled, monkeypatch):
    source, folder = compiled
    runs = []
    monkeypatch.setattr(bytecode.subprocess, "run", lambda *args, **kwargs: runs.append(args))
    bytecode.prepare.cache_clear()
    assert bytecode.prepare() == folder and runs == []  # made from this environment already
    (source.parent / "new_package").mkdir()  # an install changes the folder
    bytecode.prepare.cache_clear()
    assert bytecode.prepare() == folder and len(runs) == 1
    bytecode.prepare.cache_clear()


def test_no_folder_where_the_environment_has_its_bytecode(monkeypatch, tmp_path):
    monkeypatch.setattr(bytecode, "FOLDER", tmp_path / "unused")
    monkeypatch.setattr(bytecode, "beside_source", lambda module: True)
    bytecode.prepare.cache_clear()
    assert bytecode.prepare() is None
    assert not (tmp_path / "unused").exists()


PLANT = """
    import importlib.util, pathlib, sys
    import sample_module
    print(sys.pycache_prefix, sample_module.VALUE)
    pyc = pathlib.Path(importlib.util.cache_from_source(sample_module.__file__))
    for target in (pyc, pyc.parent / "new.pyc"):
        try:
            pathlib.Path(target).write_bytes(b"planted")
            print("wrote", target)
        except OSError:
            print("refused")
"""


@pytest.mark.parametrize("mechanism", ["bubblewrap", "namespaces"])
def test_a_sandbox_loads_the_bytecode_and_cannot_plant_any(compiled, mechanism):
    source, folder = compiled
    if not sandbox.probe(mechanism)[0]:
        pytest.skip(f"{mechanism}: {sandbox.probe(mechanism)[1]}")
    if sandbox.readable_bytecode(mechanism) is None:
        pytest.skip("the fallback without root shares the grader's uid: it gets no bytecode folder")
    pyc = bytecode_of(source, folder)
    before = pyc.read_bytes()
    work = sandbox.workspace()
    try:
        argv, env = sandbox.command([sys.executable, "-c", textwrap.dedent(PLANT)], work, mechanism)
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    finally:
        finish(work)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(folder), "42", "refused", "refused"]
    assert pyc.read_bytes() == before and not (pyc.parent / "new.pyc").exists()


def test_the_fallback_without_root_gets_no_bytecode_folder(compiled, monkeypatch):
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    assert sandbox.readable_bytecode("namespaces") is None
    assert sandbox.readable_bytecode("bubblewrap") == compiled[1]


def sandboxed(program: str, mechanism: str) -> subprocess.Popen:
    """`program` started in a fresh working copy under `mechanism` (its grading ended when the process is
    collected)."""
    if not sandbox.probe(mechanism)[0]:
        pytest.skip(f"{mechanism}: {sandbox.probe(mechanism)[1]}")
    if sandbox.readable_bytecode(mechanism) is None:
        pytest.skip("the fallback without root shares the grader's uid: it gets no bytecode folder")
    work = sandbox.workspace()
    argv, env = sandbox.command([sys.executable, "-c", textwrap.dedent(program)], work, mechanism)
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    weakref.finalize(process, finish, work)
    return process


def finish(work: Path) -> None:
    """End the grading of the working copy `work`, as the grader does: its processes, its memory cgroup, its files."""
    sandbox.kill_processes_of(sandbox.owner_of(work))
    sandbox.remove_workspace(work)


SEARCH = """
    import os, sys
    found = []
    for folder, _, files in os.walk(sys.pycache_prefix):
        for name in files:
            try:
                with open(os.path.join(folder, name), "rb") as f:
                    found += [name] if b"HIDDEN-CASE-7781" in f.read() else []
            except OSError:
                pass
    print(found)
"""


@pytest.mark.parametrize("mechanism", ["bubblewrap", "namespaces"])
def test_a_sandbox_cannot_read_the_bytecode_of_what_the_grader_imported(
    compiled, mechanism, tmp_path, monkeypatch
):
    """The grader's own processes write into the folder what they import from outside the environment: the
    course's code and the private overlay's judges with their hidden cases (`overlay.load_units`)."""
    judge = tmp_path / "overlay" / "judge"
    judge.mkdir(parents=True)
    (judge / "unit06.py").write_text('HIDDEN = "HIDDEN-CASE-7781"\nclass UNIT:\n    notebook = "x.ipynb"\n')
    monkeypatch.setattr(sys, "pycache_prefix", str(compiled[1]))  # as the grader's worker runs
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    try:
        overlay.load_units(tmp_path / "overlay")
    finally:
        sys.modules.pop("flash_course_overlay.unit06", None)
    assert bytecode_of(judge / "unit06.py", compiled[1]).is_file()  # the grader wrote it
    out, err = sandboxed(SEARCH, mechanism).communicate(timeout=120)
    assert out.strip() == "[]", out + err


HOLD = """
    import fcntl, sys, time
    try:
        lock = open(sys.pycache_prefix + "/.lock")
        fcntl.flock(lock, fcntl.LOCK_EX)
        print("locked", flush=True)
        time.sleep(120)
    except OSError:
        print("refused", flush=True)
"""


@pytest.mark.parametrize("mechanism", ["bubblewrap", "namespaces"])
def test_a_sandbox_cannot_hold_the_graders_compile_lock(compiled, mechanism):
    """A student's kernel that took the lock of `prepare` (a read-only file takes a flock too) would stall every
    grader of the host that starts meanwhile, before its job's time limit even runs."""
    holder = sandboxed(HOLD, mechanism)
    try:
        said = holder.stdout.readline().strip()
        preparing = threading.Thread(target=bytecode.prepare, daemon=True)
        preparing.start()
        preparing.join(timeout=20)
        stalled = preparing.is_alive()
    finally:
        holder.kill()
        holder.wait()
        bytecode.prepare.cache_clear()
    assert said == "refused" and not stalled, (said, stalled)


REPLACE = """
    import importlib.util, os, pathlib
    import sample_module
    pyc = pathlib.Path(importlib.util.cache_from_source(sample_module.__file__))
    for target in (pyc, pyc.parent / "new.pyc"):
        try:
            pathlib.Path(f"{target}.tmp").write_bytes(b"planted")
            os.replace(f"{target}.tmp", target)
            print("wrote")
        except OSError:
            print("refused")
"""


@pytest.mark.parametrize("mechanism", ["bubblewrap", "namespaces"])
def test_a_sandbox_cannot_plant_bytecode_whatever_the_graders_umask(compiled, mechanism):
    """A grader whose umask is 0 compiled into folders anyone may write (now compileall runs under umask 022): a
    pyc put in their place would be loaded by every later sandbox and by the grader itself; the mounts are
    read-only whatever the folders' modes."""
    source, folder = compiled
    shutil.rmtree(folder)
    kept = os.umask(0)
    try:
        bytecode.prepare()
    finally:
        os.umask(kept)
        bytecode.prepare.cache_clear()
    pyc = bytecode_of(source, folder)
    assert not pyc.parent.stat().st_mode & 0o022  # compileall runs under umask 022 whatever the grader's
    pyc.parent.chmod(0o777)  # made writable some other way: the read-only mount still holds
    before = pyc.read_bytes()
    out, err = sandboxed(REPLACE, mechanism).communicate(timeout=120)
    assert out.split() == ["refused", "refused"], out + err
    assert pyc.read_bytes() == before and not (pyc.parent / "new.pyc").exists()


def test_a_grader_whose_umask_lets_its_group_write_still_gets_the_folder(monkeypatch, tmp_path):
    """umask 002, the default of a non-root account with a group of its own: the folder's parent, made with it,
    was group-writable, so `prepare` refused its own folder and every sandbox compiled the environment again."""
    environment = tmp_path / "environment"
    environment.mkdir()
    (environment / "sample_module.py").write_text(SOURCE)
    monkeypatch.setattr(bytecode, "FOLDER", tmp_path / "cache" / "bytecode" / sys.implementation.cache_tag)
    monkeypatch.setattr(bytecode, "beside_source", lambda module: False)
    monkeypatch.setattr(bytecode, "environment_folders", lambda: [environment])
    bytecode.prepare.cache_clear()
    kept = os.umask(0o002)
    try:
        assert bytecode.prepare() == bytecode.FOLDER
    finally:
        os.umask(kept)
        bytecode.prepare.cache_clear()
