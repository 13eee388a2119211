"""The local pool spreads its jobs over the machine's GPUs (two faked on a CPU), and the GPU timing lock holds
across jobs whose temporary folders differ."""

import os
import subprocess
import sys
import threading
import time
import types
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

import utils
from course import ROOT
from course.grading import pool, resources, runner
from utils.measure import LOCK_DIR_ENV

HAS_GPU = utils.mode().is_gpu  # not `from conftest import`: tests/browser has a conftest module too


def test_jobs_go_to_the_gpu_running_the_fewest(monkeypatch):
    running, most, lock = {"0": 0, "1": 0}, {"0": 0, "1": 0}, threading.Lock()

    def fake_run_job(request, timeout, log, threads, gpu, at_once):
        with lock:
            running[gpu] += 1
            most[gpu] = max(most[gpu], running[gpu])
        time.sleep(0.05)
        with lock:
            running[gpu] -= 1
        return {"gpu": gpu}, False

    monkeypatch.setattr(pool, "run_job", fake_run_job)
    local = pool.LocalPool(gpus=["0", "1"])
    with ThreadPoolExecutor(4) as threads:
        done = list(threads.map(lambda i: local.run(pool.Job({}, 1, None)), range(12)))
    assert {where for _, _, where in done} == {"gpu 0", "gpu 1"}
    assert most == {"0": 2, "1": 2}  # four at a time: two on each GPU, never three on one
    assert local.running == {"0": 0, "1": 0}


def test_a_machine_without_gpus_pins_nothing(monkeypatch):
    seen = []
    monkeypatch.setattr(pool, "run_job", lambda *args: seen.append(args[4]) or ({}, False))  # its gpu
    assert pool.LocalPool(gpus=[]).run(pool.Job({}, 1, None)) == ({}, False, "")
    assert seen == [None]


def test_a_job_sees_its_gpu_alone_and_the_graders_lock_folder(tmp_path):
    env = runner.job_env(None, tmp_path, "1")
    assert env["CUDA_VISIBLE_DEVICES"] == "1"
    assert env["TMPDIR"] == str(tmp_path)
    assert env[LOCK_DIR_ENV] == runner.lock_folder() != str(tmp_path)
    unpinned = runner.job_env(None, tmp_path, None)
    assert unpinned.get("CUDA_VISIBLE_DEVICES") == os.environ.get("CUDA_VISIBLE_DEVICES")


@pytest.mark.parametrize(("named", "expected"), [(None, ["0", "1"]), ("3,5", ["3", "5"]), ("7", ["7"])])
def test_the_visible_gpus_follow_cuda_visible_devices(monkeypatch, named, expected):
    monkeypatch.setattr(utils, "mode", lambda: types.SimpleNamespace(is_gpu=True))
    monkeypatch.setattr(torch.cuda, "device_count", lambda: len(expected))
    if named is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", named)
    assert pool.visible_gpus() == expected


def test_two_gpus_double_the_default_jobs_up_to_the_cores():
    one_h100, two_h100 = 79.1, 2 * 79.1
    assert resources.default_jobs(100, 16, one_h100) == 12
    assert resources.default_jobs(100, 32, two_h100) == 24
    assert resources.default_jobs(100, 16, two_h100) == 12  # the cores bound it: compiling is CPU-bound


HOLD = """
import time
import utils
from utils.measure import timing_lock
with timing_lock():
    start = time.time()
    time.sleep(1.0)
    print(start, time.time())
"""


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="the timing lock is a no-op without a GPU")
def test_the_timing_lock_holds_across_jobs_with_their_own_temporary_folders(tmp_path):
    """Two jobs' processes (each TMPDIR its own, as runner.run_job gives them) never time at once."""
    procs = []
    for i in range(2):
        scratch = tmp_path / f"job{i}"
        scratch.mkdir()
        env = runner.job_env(None, scratch, None)
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", HOLD], env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True
            )
        )
    (a0, a1), (b0, b1) = sorted(tuple(map(float, p.communicate(timeout=120)[0].split()[-2:])) for p in procs)
    assert a1 <= b0, "both jobs held the timing lock at once"
