"""Test-wide setup: `import utils` first (it picks GPU or the Triton interpreter), the `gpu` marker, and a scratch
course folder."""

import os
import tempfile

import torch

import utils  # noqa: F401  (must come before anything imports triton)

HAS_GPU = torch.cuda.is_available() and not utils.interpreter()
# No test reads or writes an instructor's course folder (course/layout.py): this process and every one it starts
# (nbgrader's too) see a scratch one.
os.environ["FLASH_COURSE_DIR"] = tempfile.mkdtemp(prefix="course-folder-")
_deselected_gpu: list[str] = []


def pytest_collection_modifyitems(config, items):
    if HAS_GPU:
        return
    keep = []
    for item in items:
        (_deselected_gpu if item.get_closest_marker("gpu") else keep).append(item)
    if _deselected_gpu:
        config.hook.pytest_deselected(items=[i for i in items if i.get_closest_marker("gpu")])
        items[:] = keep


def pytest_terminal_summary(terminalreporter):
    if _deselected_gpu:
        terminalreporter.write_line(
            f"{len(_deselected_gpu)} gpu tests deselected: no CUDA GPU here (run `pytest -m gpu` on a GPU box)"
        )
