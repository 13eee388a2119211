"""Grading on one GPU and on two: the unit-08 class of `benchmarks.grading_throughput` graded by the local pool
and through a Ray cluster on this machine, first on its first GPU and then on two (issue 38; run it on a
two-GPU host).

    python -m benchmarks.grading_gpus --students 24 --through local ray [--out DIR]

A one-GPU run sees the first GPU and the first half of the cores (`--cores-per-gpu`, default: the machine's
cores / its GPUs), so it grades as a one-GPU host of this kind would, with `course grade`'s default jobs; a
two-GPU run sees both GPUs and every core. Ray runs start a one-node cluster (`ray start`) with those CPUs and
GPUs. Every run grades a fresh copy of the course with the same salt. Writes `grading_gpus_<through>.json` per
`--through` (per run: seconds, seconds per pair, the two-GPU time against the one-GPU time, on Ray the CPU
seconds of its own processes; per pair: which GPU graded it, its seconds (on Ray with the seconds Ray added to
it: "ray/pack", "ray/queued", "ray/unpack", "ray/pack back", "ray/place"), scores, flags and the judge's report of
each flagged cell) and, once both are in DIR,
`grading_gpus.png`; it prints whether the scores of every run found in DIR are identical.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

import utils  # noqa: E402
from benchmarks.grading_scale import grade_run, summary  # noqa: E402
from benchmarks.grading_throughput import UNIT, build, class_plan, judge_reports  # noqa: E402
from course import notebooks  # noqa: E402
from course.grading import resources  # noqa: E402
from course.grading.local_cluster import local_cluster  # noqa: E402
from course.layout import COURSE, Course  # noqa: E402
from utils.plotting import text, use_fonts  # noqa: E402


@contextlib.contextmanager
def machine_share(gpus: int, cores_per_gpu: int):
    """This process (and what it starts) sees the first `gpus` GPUs and `gpus * cores_per_gpu` cores."""
    before_cores, before_gpus = os.sched_getaffinity(0), os.environ.get("CUDA_VISIBLE_DEVICES")
    os.sched_setaffinity(0, sorted(before_cores)[: gpus * cores_per_gpu])
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, range(gpus)))
    try:
        yield
    finally:
        os.sched_setaffinity(0, before_cores)
        if before_gpus is None:
            os.environ.pop("CUDA_VISIBLE_DEVICES")
        else:
            os.environ["CUDA_VISIBLE_DEVICES"] = before_gpus


def graded(course, root: Path, through: str, gpus: int, cores_per_gpu: int) -> dict:
    """One run: the class graded by `through` ("local" or "ray") on the first `gpus` GPUs."""
    label = f"{through}-{gpus}gpu"
    with machine_share(gpus, cores_per_gpu):
        gib = torch.cuda.get_device_properties(0).total_memory / 2**30 if torch.cuda.is_available() else 80.0
        jobs = resources.default_jobs(
            1 << 30, resources.cpu_count(), gib * gpus
        )  # course grade's rule on such a host
        if through == "local":
            return grade_run(course, root, label, jobs, None) | {"gpus": gpus, "jobs": jobs}
        with local_cluster(nodes=1, cpus=resources.cpu_count(), gpus=gpus) as cluster:
            before = cluster.daemon_cpu_seconds()
            run = grade_run(course, root, label, jobs, cluster.address)
            daemons = {k: round(v - before.get(k, 0.0), 1) for k, v in cluster.daemon_cpu_seconds().items()}
            return run | {"gpus": gpus, "jobs": jobs, "ray_daemons_cpu_seconds": daemons}


def cell_scores(run: dict) -> dict[str, dict[str, float]]:
    return {entry["pair"]: entry["cells"] for entry in run["pairs_detail"]}


def figure(runs: list[dict], path: Path) -> None:
    use_fonts()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for i, through in enumerate(sorted({r["through"] for r in runs})):
        mine = sorted((r for r in runs if r["through"] == through), key=lambda r: r["gpus"])
        bars = ax.bar([r["gpus"] + 0.35 * (i - 0.5) for r in mine], [r["seconds"] for r in mine], 0.35)
        ax.bar_label(bars, [f"{r['seconds']:.0f} s" for r in mine])
        bars.set_label(text("本机进程池", "local pool") if through == "local" else "Ray")
    ax.set_xticks(sorted({r["gpus"] for r in runs}))
    ax.set_xlabel(text("GPU 数", "GPUs"))
    ax.set_ylabel(text("评完全班的秒数", "seconds to grade the class"))
    ax.set_title(text(f"单元 08：{runs[0]['pairs']} 名学生", f"unit 08: {runs[0]['pairs']} students"))
    ax.legend(loc="upper right")
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=24)
    parser.add_argument("--through", nargs="+", choices=["local", "ray"], default=["local", "ray"])
    parser.add_argument("--cores-per-gpu", type=int, default=None)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/local"))
    args = parser.parse_args()
    if torch.cuda.device_count() < 2:
        raise SystemExit("this benchmark needs a machine with two GPUs")
    cores = args.cores_per_gpu or resources.cpu_count() // torch.cuda.device_count()
    plan = class_plan(args.students)
    by_pair = {(name, UNIT): (kind, must_fail) for name, kind, _, must_fail in plan}
    nb_name = COURSE.notebooks(UNIT)[0]
    nb = notebooks.read(COURSE.source / UNIT / nb_name)
    points = {UNIT: (notebooks.graded_points(nb), set())}
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="grading-gpus-") as tmp:
        root = Path(tmp)
        course = build(root, plan)
        for through in args.through:
            runs = []
            for gpus in (1, 2):
                run = graded(course, root, through, gpus, cores)
                kept = {key: run[key] for key in ("jobs", "ray_daemons_cpu_seconds") if key in run}
                runs.append(summary(run, by_pair, points) | {"through": through, "gpus": gpus} | kept)
                graded_course = Course(root / f"course-{run['label']}", COURSE.wrong)
                for entry, row in zip(runs[-1]["pairs_detail"], run["rows"], strict=True):
                    entry |= {"cells": row.cells, "problems": row.problems, "flags": row.flags}
                    if row.flags:  # what the judge said in a flagged cell (a timed verdict that differs, say)
                        entry["flagged_reports"] = judge_reports(
                            graded_course, row.student, nb_name, " ".join(row.flags)
                        )
                # written after each run: a call cut short keeps what it finished
                write(args.out / f"grading_gpus_{through}.json", runs, cores)
    found = [
        run
        for path in sorted(args.out.glob("grading_gpus_*.json"))
        for run in json.loads(path.read_text())["runs"]
    ]
    same = all(cell_scores(run) == cell_scores(found[0]) for run in found)
    print(f"scores identical across {len(found)} runs: {same}")
    if {r["through"] for r in found} == {"local", "ray"}:
        figure(found, args.out / "grading_gpus.png")
    return 0 if same and not any(r["verdicts_not_ok"] for r in found) else 1


def write(path: Path, runs: list[dict], cores: int) -> None:
    """The runs of one `--through`, and the two-GPU time against the one-GPU time once both ran."""
    result = {"device": utils.mode().name, "cores_per_gpu": cores, "students": runs[0]["pairs"], "runs": runs}
    if len(runs) == 2:
        result["two_gpus_vs_one"] = round(runs[1]["seconds"] / runs[0]["seconds"], 3)
        print(f"{runs[0]['through']}: two GPUs took {result['two_gpus_vs_one']}× the one-GPU time")
    path.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    raise SystemExit(main())
