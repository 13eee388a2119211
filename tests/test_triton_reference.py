"""The course's own Triton kernels compiled once into a cache the gradings read and never write (issue 50, compile
once: `course.judge.triton_reference`, `utils.judged.triton_cache`). On a CPU Triton compiles nothing: these tests
lay the two layers out as Triton would and ask Triton's own cache lookup (`get_cache_manager`) for a kernel's files,
in sandboxes as a grading starts them; the `gpu` test compiles real kernels."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import utils
from course.judge import bytecode, preprocessor, sandbox, triton_reference
from utils.judged import triton_cache

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux namespaces")
KEY = "ab" * 32  # a kernel's key (hex), as Triton's compiler hashes it
ISOLATING = [
    pytest.param("bubblewrap"),
    pytest.param(
        "namespaces",
        marks=pytest.mark.skipif(
            os.geteuid() != 0, reason="a grader that is not root gives the fallback no layer"
        ),
    ),
]


def lay(cache: Path, text: str) -> None:
    """A compiled kernel of key `KEY` ("kernel.json" in a group, as Triton's compiler writes it) and a driver stub
    ("cuda_utils.so") in the Triton cache `cache`, both holding `text`."""
    folder = cache / base32(KEY)
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("kernel.json", "cuda_utils.so"):
        (folder / name).write_text(text)
    (folder / "__grp__kernel.json").write_text(
        json.dumps({"child_paths": {"kernel.json": str(folder / "kernel.json")}})
    )


def base32(key: str) -> str:
    from triton.runtime.cache import _base32

    return _base32(key)


@pytest.fixture
def reference(tmp_path, monkeypatch):
    """The grader's reference cache, made as `triton_reference.prepare` makes it (its folder this user's own, 0755)
    and named in this process's environment as `runner.worker_env` names it."""
    monkeypatch.setattr(triton_reference, "FOLDER", tmp_path / "flash-course-triton")

    def compile_into(folder: Path) -> None:
        triton_reference.cache_of(folder).mkdir(mode=0o755)
        lay(triton_reference.cache_of(folder), "reference")

    made = bytecode.made_once(triton_reference.FOLDER / "v1", "v1", compile_into)
    cache = triton_reference.cache_of(made)
    monkeypatch.setenv(triton_cache.REFERENCE_ENV, str(cache))
    assert triton_reference.in_use() == cache
    return cache


LOOK = """
import json, os, sys
from triton.runtime.cache import get_cache_manager
found = get_cache_manager(sys.argv[2])  # the hex key, as the compiler asks
group = found.get_group("kernel.json") or {}
read = lambda path: open(path).read() if path else None
print(json.dumps([read(group.get("kernel.json")), read(found.get_file("cuda_utils.so"))]))
"""
PLANT = """
import json, os, sys
written = {}
for name in ("TRITON_CACHE_DIR", "FLASH_COURSE_TRITON_REFERENCE"):
    folder = os.path.join(os.environ.get(name, "/nonexistent"), sys.argv[1])
    try:
        os.makedirs(folder, exist_ok=True)
        for file in ("kernel.json", "cuda_utils.so"):
            with open(os.path.join(folder, file), "w") as planted:
                planted.write("planted")
        with open(os.path.join(folder, "__grp__kernel.json"), "w") as group:
            group.write(json.dumps({"child_paths": {"kernel.json": os.path.join(folder, "kernel.json")}}))
        written[name] = True
    except OSError:
        written[name] = False
print(json.dumps(written))
"""


def sandboxed(mechanism: str, code: str, owner: int, cache: Path) -> object:
    """What `code` printed last (JSON), run as one of a grading's sandboxed processes sharing the Triton cache
    `cache` (`preprocessor.new_share`), with the key's folder name and the key as its arguments."""
    work = sandbox.workspace(owner=owner)
    try:
        argv, env = sandbox.command(
            [sys.executable, "-c", textwrap.dedent(code), base32(KEY), KEY],
            work,
            mechanism,
            triton_cache=cache,
        )
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        sandbox.remove_workspace(work)


@pytest.mark.parametrize("mechanism", ISOLATING)
def test_a_kernel_planted_under_a_reference_key_is_never_loaded(mechanism, reference):
    """Attack: the student's code (in the notebook's kernel or a judge child: both write their grading's Triton
    cache) plants a compiled kernel and a driver stub under the key of one of the course's own, and tries the
    reference cache too; the grading's next process asks Triton for that key. It gets the grader's (failed before
    the reference layer: the planted ones were loaded)."""
    works, why = sandbox.probe(mechanism)
    if not works:
        pytest.skip(f"{mechanism}: {why}")
    owner, cache = preprocessor.new_share()
    try:
        assert sandboxed(mechanism, PLANT, owner, cache) == {
            "TRITON_CACHE_DIR": True,
            triton_cache.REFERENCE_ENV: False,
        }
        assert sandboxed(mechanism, LOOK, owner, cache) == ["reference", "reference"]
    finally:
        preprocessor.end_sharing(owner, cache)
    assert (reference / base32(KEY) / "kernel.json").read_text() == "reference"


def test_what_the_reference_lacks_comes_from_the_gradings_own_cache(tmp_path, monkeypatch):
    """A kernel the grader did not compile (the student's own) is read from, and written to, the grading's cache."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "own"))
    monkeypatch.setenv(triton_cache.REFERENCE_ENV, str(tmp_path / "reference"))
    lay(tmp_path / "own", "the student's")
    found = triton_cache.Layered(base32(KEY))
    assert Path(found.get_group("kernel.json")["kernel.json"]).read_text() == "the student's"
    assert Path(found.put(b"new", "launcher.so")).parent == tmp_path / "own" / base32(KEY)
    assert not (tmp_path / "reference").exists()


def test_a_reference_group_naming_files_elsewhere_is_not_loaded(tmp_path, monkeypatch):
    """A group file of the reference layer whose files lie outside its own folder is not followed there."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "own"))
    monkeypatch.setenv(triton_cache.REFERENCE_ENV, str(tmp_path / "reference"))
    lay(tmp_path / "own", "planted")
    lay(tmp_path / "reference", "reference")
    group = tmp_path / "reference" / base32(KEY) / "__grp__kernel.json"
    group.write_text(
        json.dumps({"child_paths": {"kernel.json": str(tmp_path / "own" / base32(KEY) / "kernel.json")}})
    )
    assert (
        triton_cache.Layered(base32(KEY)).get_group("kernel.json") is None
    )  # compiled again, in its own cache


def test_no_reference_cache_anybody_else_may_write(reference, monkeypatch):
    """The grader hands sandboxes the reference cache only when it is its own, unwritable by others, and complete."""
    reference.chmod(0o775)
    assert triton_reference.in_use() is None and sandbox.readable_reference("bubblewrap") is None
    reference.chmod(0o755)
    assert sandbox.readable_reference("bubblewrap") == reference
    (reference.parent / bytecode.MADE_FROM).unlink()  # a warm-up that never ended
    assert triton_reference.in_use() is None
    monkeypatch.setenv(triton_cache.REFERENCE_ENV, str(reference.parent))  # the folder of its lock
    assert triton_reference.in_use() is None


def test_every_warm_up_call_runs():
    """The warm-up's calls of the `utils` kernels are well formed (it raises on anything but a tile too large for the
    device): here at the shortest length, each runs on a CPU (no tile is too large there), all but a few on a GPU
    (47 of 48 on an H200)."""
    ran, made = triton_cache.warm(str(utils.device()), lengths=(16,))
    assert made == 48
    assert ran == made if utils.device().type == "cpu" else ran >= made - 4, ran


@pytest.mark.skipif(utils.device().type == "cuda", reason="a GPU has a reference cache: the gpu test below")
def test_a_cpu_has_no_reference_cache(monkeypatch, tmp_path):
    monkeypatch.setattr(triton_reference, "FOLDER", tmp_path / "unused")
    triton_reference.prepare.cache_clear()
    try:
        assert triton_reference.prepare() is None and not (tmp_path / "unused").exists()
    finally:
        triton_reference.prepare.cache_clear()


@pytest.mark.gpu
def test_the_gradings_read_the_course_kernels_compiled_once(tmp_path, monkeypatch):
    """On the GPU: the grader's warm-up compiles the course's `utils` kernels once; a sandboxed process then runs
    one of them and compiles nothing of it into its grading's cache."""
    monkeypatch.setattr(triton_reference, "FOLDER", tmp_path / "flash-course-triton")
    triton_reference.prepare.cache_clear()
    try:
        cache = triton_reference.prepare()
    finally:
        triton_reference.prepare.cache_clear()
    assert cache is not None and any(cache.iterdir())
    monkeypatch.setenv(triton_cache.REFERENCE_ENV, str(cache))
    owner, own = preprocessor.new_share()
    run = "import json, torch; from utils import io_kernels\nio_kernels.copy(torch.ones(128 * 64, device='cuda'))\nprint(json.dumps(0))"
    try:
        sandboxed("bubblewrap", run, owner, own)
        from course.judge import triton_stats

        stages = triton_stats.stages("pair", own)
    finally:
        preprocessor.end_sharing(owner, own)
    assert stages["pair compiles"] == 0 and stages["pair C builds"] == 0, stages
