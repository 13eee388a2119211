"""What this machine has for grading: its cores, its GPUs' memory, the RAM the gradings' cgroups share, and how many
pairs to grade at once from them. Below the grading run (`grade`) and its pools (`pool`), which both ask."""

from __future__ import annotations

import os

import torch

import utils
from course.judge import cgroup
from utils.messages import bilingual

GPU_GIB_PER_JOB = (
    4  # a job's CUDA contexts (notebook kernel, self-check child, up to 3 judge children) and tensors
)


# RAM one grading's cgroup needs (peaks measured: units 06-07 on a CPU 0.4 GiB, unit 08 on the H200 2.1 GiB)
HOST_GIB_PER_GRADING = {"cpu": 1, "gpu": 3}


def default_jobs(pairs: int, cpus: int, gpu_memory_gib: float | None, memory_gib: float | None = None) -> int:
    """How many pairs to grade at once: one per core on a CPU (`gpu_memory_gib` None); on GPUs three quarters
    of the cores (compiling Triton kernels is CPU-bound, one compilation per process; measured on the 16-core
    H100 host: 12 at once graded 12 unit-08 students in 170 s with every verdict right) and at most one per
    GPU_GIB_PER_JOB of the GPUs' memory (`gpu_memory_gib`: all GPUs' together; the local pool spreads the jobs
    over them); where the gradings share `memory_gib` of RAM, as many as leave each of their cgroups
    HOST_GIB_PER_GRADING (`jobs_memory_cap`)."""
    device = "cpu" if gpu_memory_gib is None else "gpu"
    most = cpus if device == "cpu" else min(cpus * 3 // 4, int(gpu_memory_gib // GPU_GIB_PER_JOB))
    if memory_gib is not None:
        most = min(most, jobs_memory_cap(memory_gib, device))
    return max(1, min(pairs, most))


def jobs_memory_cap(memory_gib: float, device: str) -> int:
    """The most jobs at once whose gradings' cgroups (`cgroup.share`) each get what a grading on `device` needs."""
    return int(memory_gib // (cgroup.SANDBOXES_PER_JOB * HOST_GIB_PER_GRADING[device]))


def gradings_memory_gib() -> float | None:
    """The RAM all gradings here share (`cgroup.budget`) where they get memory cgroups, in GiB; else None."""
    return None if cgroup.unavailable() else cgroup.budget() / 2**30


def warn_memory(jobs: int, memory_gib: float, device: str, host: str = "") -> None:
    """Say so when `jobs` at once leave each grading's cgroup less RAM than a grading needs: some may be killed.
    `host` names a Ray node (default: this machine)."""
    if jobs > (cap := jobs_memory_cap(memory_gib, device)):
        each = memory_gib / (cgroup.SANDBOXES_PER_JOB * jobs)
        where = f"{host}: " if host else ""
        print(
            bilingual(
                f"注意：{where}同时评 {jobs} 份时每次评分只有 {each:.1f} GiB 内存（需要约 {HOST_GIB_PER_GRADING[device]} GiB），"
                f"可能被杀掉；{'该节点' if host else '本机'}最多 {cap} 份",
                f"warning: {where}{jobs} at once leave each grading {each:.1f} GiB of memory (about "
                f"{HOST_GIB_PER_GRADING[device]} GiB needed), some may be killed; at most {cap} "
                f"{'on that node' if host else 'here'}",
            )
        )


def gpu_memory_gib() -> float | None:
    """The memory of the GPUs a local run uses (`pool.visible_gpus`), in GiB together, on a GPU run; else None."""
    if not utils.mode().is_gpu:
        return None
    return (
        sum(torch.cuda.get_device_properties(i).total_memory for i in range(torch.cuda.device_count()))
        / 2**30
    )


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
