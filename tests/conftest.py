"""Test-wide setup: `import utils` first (it picks GPU or the Triton interpreter), the `gpu` marker, a scratch
course folder, and the fixture's class graded once for the files that compare against it."""

import os
import tempfile

import pytest
import torch

import utils  # noqa: F401  (must come before anything imports triton)

HAS_GPU = torch.cuda.is_available() and not utils.interpreter()
# No test reads or writes an instructor's course folder (course/layout.py): this process and every one it starts
# (nbgrader's too) see a scratch one.
os.environ["FLASH_COURSE_DIR"] = tempfile.mkdtemp(prefix="course-folder-")
_deselected_gpu: list[str] = []
_deselected_heavy: list[str] = []


def pytest_collection_modifyitems(config, items):
    """Without a GPU, `gpu` tests are deselected; `heavy` ones (CPU work CI's 2 cores cannot afford) unless the
    marker expression names them (`pytest -m "gpu or heavy"` on the GPU host)."""
    wanted_heavy = "heavy" in (config.option.markexpr or "")
    keep, dropped = [], []
    for item in items:
        if item.get_closest_marker("gpu") and not HAS_GPU:
            _deselected_gpu.append(item.nodeid)
            dropped.append(item)
        elif item.get_closest_marker("heavy") and not wanted_heavy:
            _deselected_heavy.append(item.nodeid)
            dropped.append(item)
        else:
            keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def pytest_terminal_summary(terminalreporter):
    if _deselected_gpu:
        terminalreporter.write_line(
            f"{len(_deselected_gpu)} gpu tests deselected: no CUDA GPU here (run `pytest -m gpu` on a GPU box)"
        )
    if _deselected_heavy:
        terminalreporter.write_line(
            f"{len(_deselected_heavy)} heavy tests deselected: they run on the GPU host's 16 cores "
            '(`pytest -m "gpu or heavy"`, tests/README.md)'
        )


@pytest.fixture(scope="session")
def class_graded_one_at_a_time(tmp_path_factory):
    """The fixture's sample class plus dan_blank, graded one pair at a time by the local pool, once a session:
    (the class folder, the course, the rows). Read it only: a test that grades that course again copies it."""
    from pipeline_fixture import course_copy, sample_class_with_blank

    from course.grading import grade

    tmp = tmp_path_factory.mktemp("one_at_a_time")
    class_folder = sample_class_with_blank(tmp)
    course = course_copy(tmp / "course")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FLASH_COURSE_CELL_TIMEOUT", "10")
        rows = grade.grade(course, class_folder, timeout=300, jobs=1)
    return class_folder, course, rows
