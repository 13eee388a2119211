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
