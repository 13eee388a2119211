"""Where a pair's grading time goes: the judge's order of cells (a cell judged `after` another shares its child)
and the Triton cache read from outside (`course.judge.triton_stats`). The stages of a real grading are checked on
the demo's class (tests/test_course_units.py)."""

import dataclasses
import os
import threading
import time

from course import ROOT, notebooks
from course.judge import preprocessor, triton_stats, units
from course.judge.core import Cell

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
