"""Grading at scale: a class of (student, unit) pairs of units 01–05 graded by the local pool and on Ray clusters of
1, 2 and 4 nodes started on this machine, timed, with the same salt (every run must give every cell the same score).

    python -m benchmarks.grading_scale --pairs 1000 --nodes 1 2 4 [--cpus-per-node 4] [--out DIR]

Each student hands in every unit, as the reference, a legitimate variant or a wrong implementation (the mix of
`benchmarks.grading_throughput`). Writes `grading_scale.json` (per run: seconds, pairs per minute, the scaling
efficiency against one node and the ratio to the local pool; per pair: its node and where its time went) and
`grading_scale.png`. From the measured seconds per pair and the committed GPU throughput it estimates what
1,000 students × 10 units cost on 16 GPU nodes.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import utils  # noqa: E402
from benchmarks.grading_throughput import class_plan, verdict  # noqa: E402
from course import notebooks, release  # noqa: E402
from course.grading import grade, resources, submissions  # noqa: E402
from course.grading.local_cluster import local_cluster  # noqa: E402
from course.layout import COURSE, Course  # noqa: E402
from utils.plotting import text, use_fonts  # noqa: E402

UNITS = ["01_memory_bottleneck", "02_io_aware", "03_tiling", "04_online_softmax", "05_recomputation"]
SALT = "grading-scale-benchmark"
GPU_THROUGHPUT = Path("benchmarks/results/h100/grading_throughput.json")  # unit 08 on one H100 host


def build(root: Path, pairs: int) -> tuple[Course, dict[tuple[str, str], tuple[str, tuple | None]]]:
    """A course of units 01–05 and `pairs` submissions under `root/class`; {(student, unit): (kind, must_fail)}."""
    course = Course(root / "course", COURSE.wrong)
    release.build(COURSE, UNITS, course.release)
    students = math.ceil(pairs / len(UNITS))
    plan = {}
    for unit in UNITS:
        shutil.copytree(COURSE.source / unit, course.source / unit)
        for i, (_, kind, overrides, must_fail) in enumerate(class_plan(students, unit)):
            student = f"s{i:04d}"
            if len(plan) < pairs:
                plan[(student, unit)] = (kind, must_fail)
                dest = root / "class" / student / unit
                submissions.write_student(course.release / unit, course.source / unit, dest, overrides)
    return course, plan


def unit_points(course: Course) -> dict[str, tuple[dict[str, float], set[str]]]:
    """Per unit: its test cells' points and, without a GPU, the GPU-only cells (which cannot earn points)."""
    found = {}
    for unit in UNITS:
        nb = notebooks.read(course.source / unit / course.notebooks(unit)[0])
        gpu_only = set() if utils.mode().is_gpu else set(notebooks.gpu_only_tests(nb))
        found[unit] = (notebooks.graded_points(nb), gpu_only)
    return found


def grade_run(course: Course, root: Path, label: str, jobs: int, address: str | None) -> dict:
    """Grade the class in a fresh copy of the course; its rows and timings."""
    copy = Course(root / f"course-{label}", COURSE.wrong)
    shutil.copytree(course.root, copy.root)
    started = time.monotonic()
    rows = grade.grade(copy, root / "class", jobs=jobs, selection=grade.Selection(salt=SALT), ray=address)
    seconds = time.monotonic() - started
    print(f"{label}: {len(rows)} pairs in {seconds:.0f} s ({60 * len(rows) / seconds:.1f} pairs/min)")
    return {"label": label, "seconds": round(seconds, 1), "rows": rows}


def summary(run: dict, plan, points) -> dict:
    """What a run is worth recording: throughput, where each pair ran and took its time, verdicts, scores."""
    rows = run["rows"]
    pair_seconds = [sum(v for k, v in r.seconds.items() if "/" not in k) for r in rows]
    return {
        "label": run["label"],
        "seconds": run["seconds"],
        "pairs": len(rows),
        "pairs_per_minute": round(60 * len(rows) / run["seconds"], 2),
        "median_pair_seconds": round(statistics.median(pair_seconds), 2) if pair_seconds else None,
        "nodes_used": sorted({r.node or "local" for r in rows}),
        "verdicts_not_ok": {
            f"{r.student}/{r.unit}": v
            for r in rows
            if (v := verdict(*plan[(r.student, r.unit)], r, *points[r.unit])) != "ok"
        },
        "pairs_detail": [
            {"pair": f"{r.student}/{r.unit}", "node": r.node, "score": r.score, "seconds": r.seconds}
            for r in rows
        ],
    }


def scores(run: dict) -> dict:
    return {(r.student, r.unit): (r.score, r.status, r.cells) for r in run["rows"]}


def estimate() -> dict | None:
    """1,000 students × 10 units on 16 GPU nodes, from unit 08's committed seconds per submission on one H100 host
    (the dearest unit: an upper bound for every unit)."""
    if not GPU_THROUGHPUT.exists():
        return None
    measured = json.loads(GPU_THROUGHPUT.read_text())
    per_pair = min(r["seconds_per_submission"] for r in measured["rounds"])
    pairs, nodes = 1000 * 10, 16
    return {
        "from": str(GPU_THROUGHPUT),
        "unit08_seconds_per_pair_one_host": per_pair,
        "jobs_per_host": measured["jobs"],
        "pairs": pairs,
        "gpu_nodes": nodes,
        "hours_if_every_pair_cost_unit08s": round(pairs * per_pair / nodes / 3600, 2),
        "seconds_per_pair_for_one_hour": round(3600 * nodes / pairs, 2),
    }


def figure(results: list[dict], path: Path) -> None:
    use_fonts()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ray_runs = [r for r in results if r["nodes"]]
    ax.plot([r["nodes"] for r in ray_runs], [r["pairs_per_minute"] for r in ray_runs], "o-", label="Ray")
    for r in results:
        if not r["nodes"]:
            ax.axhline(r["pairs_per_minute"], ls="--", color="gray", label=text("本机进程池", "local pool"))
    ax.set_xlabel(text("Ray 节点数（同一台机器）", "Ray nodes (one machine)"))
    ax.set_ylabel(text("每分钟评完的（学生, 单元）", "(student, unit) pairs graded per minute"))
    ax.set_title(
        text(f"单元 01–05 的 {results[0]['pairs']} 份作业", f"{results[0]['pairs']} pairs of units 01–05")
    )
    ax.set_xticks([r["nodes"] for r in ray_runs])
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument(
        "--cpus-per-node", type=int, default=None, help="default: this machine's CPUs / most nodes"
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/local"))
    args = parser.parse_args()
    cpus = args.cpus_per_node or max(1, resources.cpu_count() // max(args.nodes))
    with tempfile.TemporaryDirectory(prefix="grading-scale-") as tmp:
        root = Path(tmp)
        course, plan = build(root, args.pairs)
        points = unit_points(course)
        jobs = resources.default_jobs(len(plan), resources.cpu_count(), resources.gpu_memory_gib())
        runs = [{**grade_run(course, root, "local", jobs, None), "nodes": 0}]
        for n in args.nodes:
            with local_cluster(nodes=n, cpus=cpus) as cluster:
                runs.append({**grade_run(course, root, f"ray-{n}", jobs, cluster.address), "nodes": n})
    results = [{**summary(run, plan, points), "nodes": run["nodes"]} for run in runs]
    one = next((r for r in results if r["nodes"] == 1), None)
    for r in results[1:]:
        r["vs_local_pool"] = round(r["pairs_per_minute"] / results[0]["pairs_per_minute"], 3)
        if one:
            r["efficiency_vs_one_node"] = round(
                r["pairs_per_minute"] / (r["nodes"] * one["pairs_per_minute"]), 3
            )
    same = all(scores(run) == scores(runs[0]) for run in runs)
    result = {
        "device": utils.mode().name,
        "cpus": resources.cpu_count(),
        "cpus_per_node": cpus,
        "local_jobs": jobs,
        "units": UNITS,
        "runs": results,
        "scores_identical": same,
        "all_verdicts_ok": not any(r["verdicts_not_ok"] for r in results),
        "estimate_1000_students_16_gpu_nodes": estimate(),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "grading_scale.json").write_text(json.dumps(result, indent=1, ensure_ascii=False))
    figure(results, args.out / "grading_scale.png")
    for r in results:
        extra = {k: r[k] for k in ("vs_local_pool", "efficiency_vs_one_node") if k in r}
        print(
            f"{r['label']}: {r['pairs_per_minute']} pairs/min {extra} not ok: {r['verdicts_not_ok'] or 'none'}"
        )
    print(f"scores identical: {same}; written: {args.out / 'grading_scale.json'}")
    return 0 if same and result["all_verdicts_ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
