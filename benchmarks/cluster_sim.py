"""A class of 1,000 students × 10 units on a 16-node Ray cluster: a model on paper and a discrete-event simulation.

    python -m benchmarks.cluster_sim [--students 1000] [--nodes 16] [--slots 12] [--out DIR]
    python -m benchmarks.cluster_sim --throughput benchmarks/results/h200/units/*/grading_throughput.json

Each node grades `--slots` pairs at once (`course grade`'s default jobs on a 16-core H200 host: 12), and each pair
costs a time drawn from the measured costs of its unit at that concurrency (`--throughput`: a
`benchmarks.grading_throughput` result per unit, read as `benchmarks.feedback_rush.costs_from_throughput` reads
it), times `--ray-factor` (Ray's cost over the local pool's, measured on the H200s: 293.3 s against 266.0 s).
Units without a measurement cost what the H200's `course demo` leaves for them (`DEMO`: 3 students × 10 units in
167 s at 12 jobs, less its unit-08 pairs), drawn like unit 08's costs, scaled.

The queue: every pair is handed to the cluster at once, a free slot takes the next (`--order`: as handed in,
student by student, or the dearest unit first). Stragglers: a `--straggler-share` of the pairs take a Pareto
(`--straggler-alpha`) multiple of their time, never past the job timeout (600 s on a GPU), where the pair ends
graded as a timeout. A node is lost once half of the pairs are graded (`--lose-node`): the pairs it was grading
are queued again first (Ray's `max_retries`), and its slots are gone. The paper model: the work spread over the
slots, the second half over one node fewer, plus the dearest pair (the last one started can end that late).

Writes `cluster_sim.json` (the costs and where they came from, each run's makespan against the one-hour goal, the
bounds, the requeued pairs) and `cluster_sim.png` (pairs graded over time, bilingual labels).
"""

from __future__ import annotations

import argparse
import heapq
import json
import random
import statistics
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.feedback_rush import costs_from_throughput, percentile
from utils.plotting import text, use_fonts

UNITS = [
    "01_memory_bottleneck",
    "02_io_aware",
    "03_tiling",
    "04_online_softmax",
    "05_recomputation",
    "06_flash_attention_pytorch",
    "07_triton_basics",
    "08_flash_attention_triton",
    "09_systems_lab",
    "10_hopper",
]
MEASURED = Path("benchmarks/results/h200/grading_throughput_12_reaper.json")  # unit 08, 12 jobs on 16 cores
DEMO = {"pairs": 30, "seconds": 167.0, "jobs": 12, "unit08_pairs": 3, "source": "issue 50, H200, 2026-11-28"}
RAY_FACTOR = round(
    293.3 / 266.0, 3
)  # benchmarks/results/h200-x2: 24 unit-08 pairs on one GPU, Ray / local pool
TIMEOUT = 600.0  # course.grading.grade.default_timeout() on a GPU
GOAL = 3600.0


@dataclass
class Pair:
    student: int
    unit: str
    cost: float  # seconds on one slot
    attempts: list[tuple[int, float, float]] = field(default_factory=list)  # (node, start, end) of each
    done: float | None = None


@dataclass
class Run:
    pairs: list[Pair]
    makespan: float
    slots: int
    lost_node: int | None
    lost_at: float | None
    timeline: list[tuple[float, int]]  # (time, pairs graded)

    def work(self) -> float:
        """Slot-seconds spent: every attempt, the lost node's cut short included."""
        return sum(end - start for pair in self.pairs for _, start, end in pair.attempts)


def unit_costs(throughputs: list[Path]) -> tuple[dict[str, list[float]], dict[str, str]]:
    """({unit: pair costs in seconds}, {unit: where they came from}) for every unit of `UNITS`."""
    costs, sources = {}, {}
    for path in throughputs or [MEASURED]:
        for unit, found in costs_from_throughput(path).items():
            costs[unit], sources[unit] = found, str(path)
    reference = costs.get("08_flash_attention_triton") or next(iter(costs.values()))
    per_demo_pair = demo_share(statistics.mean(reference))
    for unit in UNITS:
        if unit not in costs:
            scale = per_demo_pair / statistics.mean(reference)
            costs[unit] = [cost * scale for cost in reference]
            sources[unit] = f"estimated: what the demo ({DEMO['source']}) leaves per pair, unit 08's spread"
    return costs, sources


def demo_share(unit08_cost: float) -> float:
    """Seconds per pair of the demo's other units: its slot-seconds (an upper bound: its tail is idle) less its
    unit-08 pairs, shared among the rest."""
    slot_seconds = DEMO["seconds"] * DEMO["jobs"]
    return (slot_seconds - DEMO["unit08_pairs"] * unit08_cost) / (DEMO["pairs"] - DEMO["unit08_pairs"])


def make_class(
    students: int, costs: dict[str, list[float]], share: float, alpha: float, factor: float, seed: int
) -> list[Pair]:
    """Every (student, unit) pair, student by student, with its cost: a measured one of its unit times `factor`,
    a straggler's a Pareto multiple of it, never past `TIMEOUT`."""
    draw = random.Random(seed)
    pairs = []
    for student in range(students):
        for unit in sorted(costs):
            cost = draw.choice(costs[unit]) * factor
            if draw.random() < share:
                cost *= draw.paretovariate(alpha)
            pairs.append(Pair(student, unit, min(cost, TIMEOUT)))
    return pairs


def simulate(pairs: list[Pair], nodes: int, slots: int, lose_node: bool) -> Run:
    """Grade `pairs` in their order on `nodes` × `slots`; with `lose_node`, the last node dies once half of the
    pairs are graded and what it was grading is queued again, first."""
    queue, running = deque(pairs), {}  # (node, slot) -> (pair, start)
    free = [(node, slot) for node in range(nodes) for slot in range(slots)]
    events: list[tuple[float, int, tuple[int, int]]] = []  # (end, attempt number, slot)
    now, graded, attempt, timeline = 0.0, 0, 0, [(0.0, 0)]
    lost, lost_at = (nodes - 1 if lose_node else None), None

    def start(where: tuple[int, int]) -> None:
        nonlocal attempt
        pair = queue.popleft()
        running[where] = (pair, now, attempt)
        heapq.heappush(events, (now + pair.cost, attempt, where))
        attempt += 1

    while free and queue:
        start(free.pop())
    while events:
        now, number, where = heapq.heappop(events)
        pair, began, current = running.get(where, (None, 0.0, -1))
        if current != number:
            continue  # the attempt of a node that died
        del running[where]
        pair.attempts.append((where[0], began, now))
        pair.done, graded = now, graded + 1
        timeline.append((now, graded))
        free.append(where)
        if lost is not None and lost_at is None and graded >= len(pairs) / 2:
            lost_at = now
            for slot in [w for w in running if w[0] == lost]:
                cut, cut_began, _ = running.pop(slot)
                cut.attempts.append((lost, cut_began, now))
                queue.appendleft(cut)
            free = [w for w in free if w[0] != lost]
        while free and queue:
            start(free.pop())
    makespan = max(pair.done for pair in pairs)  # not `now`: a dead node's attempts still end in `events`
    return Run(pairs, makespan, nodes * slots, lost, lost_at, timeline)


def paper(pairs: list[Pair], nodes: int, slots: int, lose_node: bool) -> float:
    """The model on paper: half the work on every slot, the other half on one node fewer, plus the dearest pair."""
    work = sum(pair.cost for pair in pairs)
    if not lose_node:
        return work / (nodes * slots) + max(pair.cost for pair in pairs)
    return work / 2 / (nodes * slots) + work / 2 / ((nodes - 1) * slots) + max(pair.cost for pair in pairs)


def summary(run: Run, pairs_cost: list[float], model: float) -> dict:
    requeued = [pair for pair in run.pairs if len(pair.attempts) > 1]
    return {
        "makespan_minutes": round(run.makespan / 60, 1),
        "under_one_hour": run.makespan <= GOAL,
        "paper_model_minutes": round(model / 60, 1),
        "work_over_slots_minutes": round(run.work() / run.slots / 60, 1),
        "pairs": len(run.pairs),
        "graded": sum(1 for pair in run.pairs if pair.done is not None),
        "timeouts": sum(1 for cost in pairs_cost if cost >= TIMEOUT),
        "requeued_pairs": len(requeued),
        "lost_node": run.lost_node,
        "lost_at_minutes": round(run.lost_at / 60, 1) if run.lost_at is not None else None,
        "wasted_slot_minutes": round(sum(e - s for p in requeued for _, s, e in p.attempts[:-1]) / 60, 1),
        "pair_seconds": {
            "median": round(statistics.median(pairs_cost), 1),
            "p95": round(percentile(pairs_cost, 0.95), 1),
            "max": round(max(pairs_cost), 1),
        },
    }


def dearest_first(pairs: list[Pair], costs: dict[str, list[float]]) -> list[Pair]:
    """The pairs of the dearest unit (by its mean measured cost) first; students in order within a unit."""
    mean = {unit: statistics.mean(found) for unit, found in costs.items()}
    return sorted(pairs, key=lambda pair: -mean[pair.unit])


def plot(runs: dict[str, Run], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    use_fonts()
    figure, axes = plt.subplots(figsize=(8, 4.5))
    for label, run in runs.items():
        axes.step([t / 60 for t, _ in run.timeline], [n for _, n in run.timeline], where="post", label=label)
        if run.lost_at is not None:
            axes.axvline(run.lost_at / 60, color="grey", linestyle=":", linewidth=0.8)
    axes.axvline(GOAL / 60, color="k", linestyle="--", label=text("一小时目标", "one-hour goal"))
    axes.set_xlabel(text("分钟", "minutes"))
    axes.set_ylabel(text("已评分的（学生, 单元）对", "(student, unit) pairs graded"))
    axes.set_title(
        text("16 个节点评 1000 名学生 × 10 个单元", "1,000 students × 10 units on 16 nodes")
        + "\n"
        + text("点线：丢失一个节点", "dotted: a node lost"),
        fontsize=10,
    )
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--throughput", type=Path, nargs="*", default=[], help="grading_throughput results")
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=16)
    parser.add_argument("--slots", type=int, default=12, help="pairs graded at once on a node")
    parser.add_argument("--ray-factor", type=float, default=RAY_FACTOR)
    parser.add_argument("--straggler-share", type=float, default=0.02)
    parser.add_argument("--straggler-alpha", type=float, default=1.5)
    parser.add_argument(
        "--target", type=float, default=0.5, help="the pairs' cost once compiled once (issue 50)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/local/cluster"))
    args = parser.parse_args()
    costs, sources = unit_costs(args.throughput)
    scenarios = {  # label: (Chinese label, cost factor, order, lose a node)
        "today, handed-in order, no node lost": ("今天，按提交顺序，不丢节点", 1.0, "handed in", False),
        "today, handed-in order": ("今天，按提交顺序", 1.0, "handed in", True),
        "today, dearest unit first": ("今天，最贵的单元先评", 1.0, "dearest first", True),
        f"compiled once (×{args.target}), dearest unit first": (
            f"只编译一次（×{args.target}），最贵的单元先评",
            args.target,
            "dearest first",
            True,
        ),
    }
    runs, results = {}, {}
    for label, (_, factor, order, lose) in scenarios.items():
        pairs = make_class(
            args.students,
            costs,
            args.straggler_share,
            args.straggler_alpha,
            args.ray_factor * factor,
            args.seed,
        )
        if order == "dearest first":
            pairs = dearest_first(pairs, costs)
        drawn = [pair.cost for pair in pairs]
        runs[label] = simulate(pairs, args.nodes, args.slots, lose)
        results[label] = summary(runs[label], drawn, paper(pairs, args.nodes, args.slots, lose))
        print(
            f"{label}: {results[label]['makespan_minutes']} min (paper {results[label]['paper_model_minutes']})"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    settings["throughput"] = [str(p) for p in args.throughput]
    mean = {unit: round(statistics.mean(found), 1) for unit, found in sorted(costs.items())}
    document = {
        "settings": settings,
        "demo": DEMO,
        "mean_pair_seconds": mean,
        "sources": sources,
        "runs": results,
    }
    (args.out / "cluster_sim.json").write_text(json.dumps(document, indent=1, ensure_ascii=False))
    plot({text(scenarios[label][0], label): run for label, run in runs.items()}, args.out / "cluster_sim.png")
    print(f"written: {args.out / 'cluster_sim.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
