"""Where a pair's grading time goes: the judge's order of cells (a cell judged `after` another shares its child),
the Triton cache read from outside (`course.judge.triton_stats`), and the cache a pair's judge children share:
that pair's alone, gone once judged. The stages of a real grading are checked on the demo's class
(tests/test_course_units.py)."""

import dataclasses
import os
import threading
import time

from course import ROOT, notebooks
from course.judge import preprocessor, sandbox, triton_stats, units
from course.judge.child import Child
from course.judge.core import Cell
from course.judge.kernel import SHARED

UNIT06 = ROOT / "source" / "06_flash_attention_pytorch" / "flash_attention_pytorch.ipynb"


def test_a_cell_judged_after_another_follows_it_in_its_child_and_keeps_its_own_seed():
    real = units.UNITS[UNIT06.name]
    first, then, *others = list(real.cells)
    runs, lock = {}, threading.Lock()

    def check(j):
        started = time.monotonic()
        time.sleep(0.2)
        with lock:
            runs[j.cell.grade_id] = (id(j.child), started, time.monotonic())
        with j.case("p", "nothing to run"):
            pass

    cells = {gid: Cell(gid, {"p": 1}, check, after=first if gid == then else None) for gid in real.cells}
    unit = dataclasses.replace(real, cells=cells)
    summary = preprocessor.judge_notebook(
        notebooks.read(UNIT06), unit, "alice", "salt", "auto", parallel_cells=3
    )
    assert (
        runs[then][0] == runs[first][0] and runs[then][1] >= runs[first][2]
    )  # same child, one after the other
    assert len({runs[gid][0] for gid in others}) > 1  # the other cells were judged at once, in other children
    assert len(set(summary["seeds"].values())) == len(cells)  # each cell's cases are still its own


def test_the_triton_cache_counts_compiled_kernels_and_c_builds_and_follows_no_link(tmp_path):
    cache = tmp_path / "cache"
    for folder, files in {
        "k1": {"attn.source": 100.0, "attn.ptx": 101.5, "attn.cubin": 102.0, "attn.json": 102.5},
        "k2": {"attn.source": 200.0, "__grp__attn.json": 200.75},
        "lib": {"cuda_utils.cpython-312-x86_64-linux-gnu.so": 50.0},
    }.items():
        (cache / folder).mkdir(parents=True)
        for name, moment in files.items():
            (cache / folder / name).write_text("x")
            os.utime(cache / folder / name, (moment, moment))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name, moment in {"a.source": 0.0, "a.json": 1000.0}.items():
        (elsewhere / name).write_text("x")
        os.utime(elsewhere / name, (moment, moment))
    (cache / "link").symlink_to(elsewhere, target_is_directory=True)
    (cache / "k2" / "linked.json").symlink_to(elsewhere / "a.json")
    assert triton_stats.stages("judge", cache) == {
        "judge compiles": 2,
        "judge compile seconds": 3.25,
        "judge C builds": 1,
    }
    assert triton_stats.stages("notebook", tmp_path / "missing")["notebook compiles"] == 0


PLANT_AND_PEEK = """import os


def plant(name):
    folder = os.environ['TRITON_CACHE_DIR']
    with open(os.path.join(folder, name), 'w') as f:
        f.write('compiled by this student')
    return folder


def peek(folder):
    seen = []
    for attempt in (lambda: os.listdir(folder), lambda: open(os.path.join(folder, 'kernel.cubin')).read(),
                    lambda: open(os.path.join(folder, 'planted.cubin'), 'w').write('x')):
        try:
            seen.append(repr(attempt()))
        except OSError as error:
            seen.append(type(error).__name__)
    return seen
"""


def test_a_students_triton_cache_is_out_of_another_students_reach():
    """Attack: the cache one student's judge children share (`StartJudge`) is named to another student's
    sandboxed code, which tries to list it, read what the first student's process compiled into it, and plant a
    kernel there. Each student's cache is a folder of the pair's own, outside the other's sandbox."""
    mechanism = sandbox.choose("auto")[0]
    grading = []
    for _ in range(2):
        owner = sandbox.new_owner()
        cache = sandbox.shared_folder("course-triton-test-", owner)
        grading.append((Child(PLANT_AND_PEEK, {}, mechanism, triton_cache=cache, owner=owner), owner, cache))
    (alice, _, alices), (bob, _, bobs) = grading
    try:
        assert alice.call("plant", "kernel.cubin").result == str(alices)
        assert bob.call("plant", "kernel.cubin").result == str(bobs) != str(alices)
        seen = bob.call("peek", str(alices)).result
        assert all(not what.startswith(("[", "'")) for what in seen), seen  # nothing listed, read or written
        assert sorted(p.name for p in alices.iterdir()) == ["kernel.cubin"]
    finally:
        for child, owner, cache in grading:
            child.close()
            preprocessor.end_sharing(owner, cache)
    assert not alices.exists() and not bobs.exists()  # nothing left for the next student


def test_the_cache_a_judge_shares_among_its_children_is_gone_once_judged(monkeypatch):
    """`StartJudge` gives the judge's children one uid and Triton cache (the notebook's kernel has its own);
    `Judge` deletes the cache when the judge is done (here with no kernel run between them), and the stages count what was compiled in it."""
    real = units.UNITS[UNIT06.name]

    def check(j):
        with j.case("p", "nothing to run"):
            pass

    cells = {gid: Cell(gid, {"p": 1}, check) for gid in real.cells}
    monkeypatch.setitem(units.UNITS, UNIT06.name, dataclasses.replace(real, cells=cells))
    resources = {"nbgrader": {"notebook": UNIT06.stem, "student": "alice", "assignment": "06"}}
    nb = notebooks.read(UNIT06)
    nb, resources = preprocessor.StartJudge(salt="salt").preprocess(nb, resources)
    owner, cache = resources[SHARED]
    assert cache.is_dir() and owner == cache.stat().st_uid
    nb, resources = preprocessor.Judge(salt="salt").preprocess(nb, resources)
    assert not cache.exists() and SHARED not in resources
