"""The feedback service under a deadline rush: a discrete-event simulation of its queue, with measured costs.

    python -m benchmarks.feedback_rush --costs FILE [--workers 16] [--hosts 1 2 4] [--students 300] [--out DIR]
    python -m benchmarks.feedback_rush --measure 01 02 03 04 05 [--jobs 2] --costs-out FILE   # measure here

Each of `--students` students hands in once during the last hour before a deadline (uniformly over the hour, a
`--burst` share of them in the last ten minutes), and a `--resubmit` share hands in again a few minutes later.
The simulated service does what course/grading/feedback_service.py does: rounds of up to workers × hosts
submissions, students in turn (the one served longest ago first), only the latest waiting submission of a student,
at most `--per-day` gradings a student; a round ends when its slowest submission does, plus `--overhead` seconds (a
scratch course, the units registered, staging); a submission's grading takes a time drawn from the measured costs of
its unit. `--continuous` simulates a pool whose workers take the next submission as soon as they are free instead.

The costs come from `--measure` (the reference and the course's variants and wrong implementations of each unit
graded by `course grade --feedback-only`'s code, `--jobs` at once: each pair's job seconds, its feedback page
included: the job makes the page at its end with the course's `FeedbackExporter`, as the service's round and
`course feedback --jobs` do; the page's own seconds are recorded beside), or from a
`benchmarks.grading_throughput` result (`--throughput FILE`: each pair's notebook seconds). They hold for the
concurrency they were measured at: on a host of C cores, a pair measured with C jobs at once costs what it costs with
C workers. Reported (JSON, and a plot of the queue length over time): submit-to-feedback time, median and 95th
percentile, of every graded submission, for each number of hosts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

HOUR, BURST_WINDOW = 3600.0, 600.0


@dataclass(order=True)
class Submission:
    at: float
    student: int
    unit: str = field(compare=False)
    cost: float = field(compare=False)
    done: float | None = field(default=None, compare=False)
    fate: str = field(default="waiting", compare=False)  # graded, superseded, over quota


def rush(
    students: int, burst: float, resubmit: float, costs: dict[str, list[float]], seed: int
) -> list[Submission]:
    """Every submission of the last hour: a unit and a grading time for each, drawn from `costs`."""
    pick = random.Random(seed)
    units = sorted(costs)
    made = []
    for student in range(students):
        at = HOUR - pick.uniform(0, BURST_WINDOW) if pick.random() < burst else pick.uniform(0, HOUR)
        unit = pick.choice(units)
        made.append(Submission(at, student, unit, pick.choice(costs[unit])))
        again = at + pick.uniform(60, 900)
        if pick.random() < resubmit and again < HOUR:  # nothing after the deadline
            made.append(Submission(again, student, unit, pick.choice(costs[unit])))
    return sorted(made)


def choose(
    waiting: list[Submission], served: dict[int, float], slots: int, quota: dict[int, int], per_day: int
):
    """The service's pick (`feedback_service.Service.choose`): the latest waiting of each student, students in turn,
    the one served longest ago first; the older superseded, the over-quota refused."""
    latest: dict[int, Submission] = {}
    for sub in waiting:
        if sub.student in latest:
            latest[sub.student].fate = "superseded"
        latest[sub.student] = sub
    for sub in latest.values():
        if quota.get(sub.student, 0) >= per_day:
            sub.fate = "over quota"
    ready = [s for s in latest.values() if s.fate == "waiting"]
    ready.sort(key=lambda s: (served.get(s.student, -1.0), s.at))
    return ready[:slots]


def simulate(subs: list[Submission], slots: int, overhead: float, per_day: int, continuous: bool):
    """Run the queue; (the submissions with their feedback times, [(time, submissions waiting)])."""
    for sub in subs:
        sub.done, sub.fate = None, "waiting"
    served: dict[int, float] = {}
    quota: dict[int, int] = {}
    upcoming, waiting = deque(subs), []
    free = [0.0] * slots  # when each worker is free again
    now, timeline = 0.0, []
    while upcoming or waiting:
        while upcoming and upcoming[0].at <= now:
            waiting.append(upcoming.popleft())
        idle = [worker for worker, at in enumerate(free) if at <= now]
        if not continuous and len(idle) < slots:
            idle = []  # a round waits for the one before it to end
        chosen = choose(waiting, served, len(idle), quota, per_day) if waiting and idle else []
        for sub in chosen:
            served[sub.student], sub.fate = now, "graded"
            quota[sub.student] = quota.get(sub.student, 0) + 1
        if continuous:
            for worker, sub in zip(idle, chosen, strict=False):
                free[worker] = sub.done = now + overhead + sub.cost
        elif chosen:
            end = now + overhead + max(sub.cost for sub in chosen)
            for sub in chosen:
                sub.done = end
            free = [end] * slots
        waiting = [sub for sub in waiting if sub.fate == "waiting"]
        timeline.append((now, len(waiting)))
        events = [at for at in free if at > now] + ([upcoming[0].at] if upcoming else [])
        if not events:
            break
        now = min(events)
    return subs, timeline


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def report(subs: list[Submission]) -> dict:
    waits = [s.done - s.at for s in subs if s.fate == "graded"]
    fates = {fate: sum(1 for s in subs if s.fate == fate) for fate in ("graded", "superseded", "over quota")}
    return {
        "submissions": len(subs),
        **fates,
        "median_minutes": round(statistics.median(waits) / 60, 2),
        "p95_minutes": round(percentile(waits, 0.95) / 60, 2),
        "max_minutes": round(max(waits) / 60, 2),
        "last_feedback_after_deadline_minutes": round((max(s.done for s in subs if s.done) - HOUR) / 60, 2),
    }


def costs_from_throughput(path: Path) -> dict[str, list[float]]:
    """Each pair's seconds in a `benchmarks.grading_throughput` result: the sum of its notebooks' gradings."""
    data = json.loads(path.read_text())
    spent = data["rounds"][0]["where_the_time_went"]
    pairs = [sum(v for k, v in stages.items() if k.endswith(".ipynb")) for stages in spent.values()]
    return {data.get("unit", "08_flash_attention_triton"): pairs}


def measured_costs(measured: dict, kind: str) -> dict[str, list[float]]:
    """Each unit's pair costs from `--measure`: the pairs' wall seconds ("wall", on that machine at its load), or
    the CPU seconds of its round shared among its pairs ("cpu": what a pair costs with a core of its own, its
    round's setup included)."""
    if kind == "wall":
        return {unit: found["seconds"] for unit, found in measured["units"].items()}
    return {unit: [found["round_cpu"] / len(found["seconds"])] for unit, found in measured["units"].items()}


def page_seconds(measured: dict) -> dict[str, float | None]:
    """Each unit's mean seconds of a feedback page, part of its costs (None: measured before pages were timed)."""
    return {
        unit: round(statistics.mean(found["page_seconds"]), 1) if found.get("page_seconds") else None
        for unit, found in measured["units"].items()
    }


def measure(units: list[str], jobs: int, per_unit: int) -> dict:
    """Grade each unit's reference, variants and wrong implementations by the preview's own code, `jobs` at
    once on this machine: each pair's job seconds (its feedback page included) and its page's, and the CPU seconds
    of the whole round (its child processes: on a loaded machine, what a pair would cost with a core of its own)."""
    from benchmarks.grading_throughput import build, class_plan
    from course.grading import grade
    from course.layout import COURSE

    found = {}
    for unit in COURSE.select(units):
        with tempfile.TemporaryDirectory(prefix="feedback-rush-") as tmp:
            course = build(Path(tmp), class_plan(per_unit, unit), unit)
            began, cpu = time.monotonic(), children_cpu()
            rows = grade.feedback_only(course, Path(tmp) / "class", jobs=jobs)
            found[unit] = {
                "seconds": [row.seconds["job"] for row in rows if "job" in row.seconds],
                "page_seconds": [
                    row.seconds[grade.FEEDBACK_PAGE] for row in rows if grade.FEEDBACK_PAGE in row.seconds
                ],
                "statuses": [row.status for row in rows],
                "round_wall": round(time.monotonic() - began, 1),
                "round_cpu": round(children_cpu() - cpu, 1),
                "load": os.getloadavg()[0],
            }
            print(unit, found[unit], flush=True)
    return {"cpus": os.cpu_count(), "jobs": jobs, "units": found}


def children_cpu() -> float:
    """User and system seconds of this process's finished children (and theirs)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def plot(timelines: dict[str, list[tuple[float, int]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4))
    for label, line in timelines.items():
        axes.step([(t - HOUR) / 60 for t, _ in line], [n for _, n in line], where="post", label=label)
    axes.axvline(0, color="k", linestyle=":", label="deadline")
    axes.set_xlabel("minutes from the deadline")
    axes.set_ylabel("submissions waiting")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--costs", type=Path, help="costs JSON written by --measure")
    parser.add_argument("--cost", choices=["cpu", "wall"], default="cpu", help="with --costs: which costs")
    parser.add_argument("--throughput", type=Path, help="a benchmarks.grading_throughput result instead")
    parser.add_argument("--measure", nargs="+", metavar="UNIT", help="measure these units' costs here")
    parser.add_argument("--jobs", type=int, default=1, help="with --measure: pairs graded at once")
    parser.add_argument("--per-unit", type=int, default=4, help="with --measure: submissions of each unit")
    parser.add_argument(
        "--costs-out", type=Path, default=Path("benchmarks/results/local/feedback_costs.json")
    )
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--burst", type=float, default=0.5, help="share handing in in the last ten minutes")
    parser.add_argument("--resubmit", type=float, default=0.3, help="share handing in a second time")
    parser.add_argument("--workers", type=int, default=16, help="submissions graded at once on one host")
    parser.add_argument("--hosts", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--overhead", type=float, default=15.0, help="seconds a round adds")
    parser.add_argument("--per-day", type=int, default=5)
    parser.add_argument("--continuous", action="store_true", help="free workers take the next at once")
    parser.add_argument(
        "--slowdown",
        type=float,
        default=1.0,
        help="a factor on every cost: e.g. 1.10 for Ray (benchmarks/results/h200-x2: 24 pairs in 293.3 s on one "
        "GPU through Ray, 266.0 s through the local pool)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/local/feedback_rush"))
    args = parser.parse_args()
    if args.measure:
        measured = measure(args.measure, args.jobs, args.per_unit)
        args.costs_out.parent.mkdir(parents=True, exist_ok=True)
        args.costs_out.write_text(json.dumps(measured, indent=1))
        return 0
    if args.throughput:
        costs = costs_from_throughput(args.throughput)
    else:
        costs = measured_costs(json.loads(args.costs.read_text()), args.cost)
    costs = {unit: [cost * args.slowdown for cost in values] for unit, values in costs.items()}
    subs = rush(args.students, args.burst, args.resubmit, costs, args.seed)
    results, timelines = {}, {}
    for hosts in args.hosts:
        simulated, timeline = simulate(
            subs, args.workers * hosts, args.overhead, args.per_day, args.continuous
        )
        results[f"{hosts} host(s)"] = report(simulated)
        timelines[f"{hosts} host(s) × {args.workers}"] = timeline
        print(hosts, results[f"{hosts} host(s)"])
    args.out.mkdir(parents=True, exist_ok=True)
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    mean_cost = {unit: round(statistics.mean(values), 1) for unit, values in costs.items()}
    found = {"settings": settings, "mean_cost_seconds": mean_cost, "results": results}
    if args.costs:
        found["mean_page_seconds"] = page_seconds(json.loads(args.costs.read_text()))
    (args.out / "feedback_rush.json").write_text(json.dumps(found, indent=1))
    plot(timelines, args.out / "feedback_rush_queue.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
