"""Unit 10 on the H100: the course's Hopper kernel beside the unit-08 kernel and SDPA's cuDNN and flash backends.

    python -m benchmarks.hopper_check --out DIR [--ns 4096 8192]

Runs the benchmark suite (`benchmarks.attention.run_suite`: every point checked against float64 before it is
timed) for bfloat16 and float16, d ∈ {64, 128}, causal and not, forward and forward+backward, then writes
DIR/<dtype>/results.json with its figures, and DIR/hopper_check.json: per (dtype, mode, d, causal) the median
over N of the Hopper kernel's throughput ratio to cuDNN, to SDPA flash and to the unit-08 kernel, the worst
single ratio to cuDNN, and whether issue 21's target holds (median ≥ 1.0× cuDNN, no point below 0.85×, no
regression against unit 08). The forward+backward of "hopper" uses the unit-08 backward. About 3–4 minutes on
an H100 (most of it compiling and autotuning).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import utils  # noqa: F401  (first: picks the GPU or the interpreter)
from benchmarks import attention, report
from benchmarks.figures import save_figures

IMPLS = ("hopper", "triton", "sdpa_cudnn", "sdpa_flash")
TARGET = {"median_vs_cudnn": 1.0, "floor_vs_cudnn": 0.85, "median_vs_unit08": 1.0}


def ratios(records: list[dict], peer: str) -> dict[tuple, list[float]]:
    """{(mode, d, causal): [hopper TFLOP/s / peer TFLOP/s at each N where both ran correctly]}."""
    speed = {
        (r["name"], r["mode"], r["d"], r["causal"], r["n"]): r["tflops"]
        for r in records
        if r["status"] == "ok"
    }
    out: dict[tuple, list[float]] = {}
    for (name, mode, d, causal, n), tflops in speed.items():
        theirs = speed.get((peer, mode, d, causal, n))
        if name == "hopper" and theirs:
            out.setdefault((mode, d, causal), []).append(tflops / theirs)
    return out


def panels(records: list[dict], dtype: str) -> list[dict]:
    vs = {peer: ratios(records, peer) for peer in ("sdpa_cudnn", "sdpa_flash", "triton")}
    rows = []
    for key in sorted(vs["sdpa_cudnn"] | vs["triton"]):
        mode, d, causal = key
        cudnn, unit08 = vs["sdpa_cudnn"].get(key, []), vs["triton"].get(key, [])
        row = {
            "dtype": dtype, "mode": mode, "d": d, "causal": causal,
            "median_vs_cudnn": statistics.median(cudnn) if cudnn else None,
            "min_vs_cudnn": min(cudnn) if cudnn else None,
            "median_vs_flash": statistics.median(vs["sdpa_flash"][key]) if vs["sdpa_flash"].get(key) else None,
            "median_vs_unit08": statistics.median(unit08) if unit08 else None,
        }  # fmt: skip
        row["target_met"] = bool(
            cudnn and unit08
            and row["median_vs_cudnn"] >= TARGET["median_vs_cudnn"]
            and row["min_vs_cudnn"] >= TARGET["floor_vs_cudnn"]
            and row["median_vs_unit08"] >= TARGET["median_vs_unit08"]
        )  # fmt: skip
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--ns", nargs="+", type=int, default=[4096, 8192])
    parser.add_argument("--dtypes", nargs="+", default=["bfloat16", "float16"])
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows, wrong = [], []
    for dtype in args.dtypes:
        grid = attention.customise(attention.default_grid(), ns=args.ns, head_dims=(64, 128), dtype=dtype)
        out = args.out / dtype
        out.mkdir(parents=True, exist_ok=True)
        results = attention.run_suite(grid, IMPLS, out, memory=False, progress=False)
        report.add_ratios(results["records"])
        attention.write_json(results, out)
        save_figures(results, out)
        rows += panels(results["records"], dtype)
        wrong += [r for r in results["records"] if r["status"] in ("wrong", "error")]
        print(f"{dtype}: {time.perf_counter() - start:.0f} s", flush=True)
    summary = {
        "target": TARGET,
        "panels": rows,
        "wrong_or_error": wrong,
        "seconds": time.perf_counter() - start,
    }
    (args.out / "hopper_check.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    for r in rows:
        print(
            f"{r['dtype']:>8} {r['mode']:>7} d={r['d']:<3} {'causal' if r['causal'] else 'full  '} "
            f"vs cuDNN {r['median_vs_cudnn'] or 0:.2f} (min {r['min_vs_cudnn'] or 0:.2f}), "
            f"vs flash {r['median_vs_flash'] or 0:.2f}, vs unit 08 {r['median_vs_unit08'] or 0:.2f}"
            f"{'' if r['target_met'] else '  below target'}"
        )
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
