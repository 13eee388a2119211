"""The environment's bytecode, compiled by the grader for its sandboxes (`course.judge.bytecode`): a sandboxed
process loads it and can write none of it, so no student's code can plant bytecode that another's imports."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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
    for target in (importlib.util.cache_from_source(sample_module.__file__), sys.pycache_prefix + "/new.pyc"):
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
        shutil.rmtree(work, ignore_errors=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(folder), "42", "refused", "refused"]
    assert pyc.read_bytes() == before and not (folder / "new.pyc").exists()


def test_the_fallback_without_root_gets_no_bytecode_folder(compiled, monkeypatch):
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    assert sandbox.readable_bytecode("namespaces") is None
    assert sandbox.readable_bytecode("bubblewrap") == compiled[1]
