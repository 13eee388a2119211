"""Ratios to the SDPA baselines, the summary table and the issue-7 targets, from the suite's records."""

from __future__ import annotations

import statistics

from benchmarks.implementations import BASELINES

# Issue 7, on an H100: per panel (d, causal), the median speed ratio to SDPA's flash backend over
# N >= the grid's summary_min_n (4k on a GPU) must reach `median`, and no single N may fall below `floor` (None: no floor).
SPEED_TARGETS = {"fwd": {"median": 1.3, "floor": 1.0}, "fwd_bwd": {"median": 1.1, "floor": None}}
MEMORY_TARGET = {"n": 131072, "max_mib": 512}  # "a few hundred MiB" for forward+backward of one head
TARGET_IMPL = "triton"
MIB = 2**20


def _point(record: dict) -> tuple:
    return record["mode"], record["d"], record["causal"], record["n"]


def add_ratios(records: list[dict]) -> None:
    """Give every record `ratio_vs_<baseline>`: its TFLOP/s over the baseline's at the same point
    (None unless both ran correctly)."""
    speed = {(r["name"], *_point(r)): r["tflops"] for r in records if r["status"] == "ok"}
    for record in records:
        for baseline in BASELINES:
            theirs = speed.get((baseline, *_point(record)))
            ok = record["status"] == "ok" and theirs
            record[f"ratio_vs_{baseline}"] = record["tflops"] / theirs if ok else None


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def summarize(records: list[dict], min_n: int) -> list[dict]:
    """One row per (implementation, mode, d, causal): medians over N >= min_n, minimum over every N,
    and the points that did not run correctly."""
    rows = []
    panels = dict.fromkeys((r["name"], r["mode"], r["d"], r["causal"]) for r in records)
    for name, mode, d, causal in panels:
        group = [r for r in records if (r["name"], r["mode"], r["d"], r["causal"]) == (name, mode, d, causal)]
        large = [r for r in group if r["n"] >= min_n and r["status"] == "ok"]
        row = {"name": name, "mode": mode, "d": d, "causal": causal}
        row["median_tflops"] = _median([r["tflops"] for r in large])
        for baseline in BASELINES:
            key = f"ratio_vs_{baseline}"
            ratios = [r[key] for r in group if r[key] is not None]
            row[f"median_{key}"] = _median([r[key] for r in large if r[key] is not None])
            row[f"min_{key}"] = min(ratios) if ratios else None
        row["not_ok"] = {str(r["n"]): r["status"] for r in group if r["status"] != "ok"}
        rows.append(row)
    return rows


def evaluate_targets(summary: list[dict], memory: list[dict], min_n: int) -> list[dict]:
    """Whether the course kernel meets each issue-7 target, with the numbers that decide it.

    A speed target needs every panel of that mode to have run correctly at every N (a wrong, failed or
    missing point is a miss) and to reach the median and the floor.
    """
    targets = []
    for mode, target in SPEED_TARGETS.items():
        rows = [r for r in summary if r["name"] == TARGET_IMPL and r["mode"] == mode]
        if not rows:
            continue
        medians = [r["median_ratio_vs_sdpa_flash"] for r in rows]
        minima = [r["min_ratio_vs_sdpa_flash"] for r in rows]
        complete = all(not r["not_ok"] for r in rows) and None not in medians + minima
        met = complete and min(medians) >= target["median"]
        if target["floor"] is not None:
            met = met and min(minima) >= target["floor"]
        floor = f", no point < {target['floor']}×" if target["floor"] is not None else ""
        targets.append(
            {
                "target": f"{mode}: median ≥ {target['median']}× SDPA flash over N ≥ {min_n} in every panel{floor}",
                "met": bool(met),
                "worst_median": min(medians) if complete else None,
                "worst_point": min(minima) if complete else None,
            }
        )
    at_n = [r for r in memory if r["name"] == TARGET_IMPL and r["n"] == MEMORY_TARGET["n"]]
    if any(r["name"] == TARGET_IMPL for r in memory):
        peak = at_n[0]["peak_memory_bytes"] if at_n and at_n[0]["status"] == "ok" else None
        targets.append(
            {
                "target": f"memory: fwd+bwd peak of one head at N = {MEMORY_TARGET['n']} ≤ {MEMORY_TARGET['max_mib']} MiB",
                "met": peak is not None and peak <= MEMORY_TARGET["max_mib"] * MIB,
                "peak_mib": peak / MIB if peak is not None else None,
            }
        )
    return targets


def _fmt(value: float | None, spec: str = ".2f") -> str:
    return "—" if value is None else format(value, spec)


def format_report(results: dict) -> str:
    """The summary table and the targets as plain text (what `python -m course bench` prints)."""
    env, grid = results["environment"], results["grid"]
    lines = [f"Device: {env['device']} · torch {env['torch']} · triton {env['triton']} · {env['date']}"]
    lines.append(f"Grid: {grid['label']}")
    if not env["meaningful"]:
        lines.append(
            "!! CPU run (Triton interpreter): the numbers below are NOT meaningful; it only shows the suite works."
        )
    over = f"N ≥ {grid['summary_min_n']}" if grid["summary_min_n"] else "all N"
    lines.append(f"Speed ratios vs SDPA flash / cuDNN: median over {over}, minimum over all N")
    header = f"{'impl':<11} {'mode':<8} {'d':>4} {'causal':<6} {'TFLOP/s':>8} {'×flash':>7} {'min':>6} {'×cuDNN':>7}  not ok"
    lines += [header, "-" * len(header)]
    for row in results["summary"]:
        not_ok = ", ".join(f"N={n}: {status}" for n, status in row["not_ok"].items())
        lines.append(
            f"{row['name']:<11} {row['mode']:<8} {row['d']:>4} {str(row['causal']):<6} "
            f"{_fmt(row['median_tflops'], '.1f'):>8} {_fmt(row['median_ratio_vs_sdpa_flash']):>7} "
            f"{_fmt(row['min_ratio_vs_sdpa_flash']):>6} {_fmt(row['median_ratio_vs_sdpa_cudnn']):>7}  {not_ok}"
        )
    for record in results["memory"]:
        if record["status"] != "ok":
            lines.append(f"memory: {record['name']} stops at N={record['n']} ({record['status']})")
    if results["targets"]:
        lines.append(
            "Issue-7 targets (defined for an H100)"
            + ("" if env["meaningful"] else ", not meaningful on CPU")
            + ":"
        )
        lines += [f"  [{'MET' if t['met'] else 'NOT MET'}] {t['target']}" for t in results["targets"]]
    return "\n".join(lines)
