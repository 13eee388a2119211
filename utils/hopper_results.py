"""Unit 10's evidence from the H100: the course's committed measurements, read for the notebook's cells.

Unit 10 cites results the course measured on an H100 (`benchmarks/results/h100/hopper/`). A student without that
GPU reads them here: `FILES` are the files the student bundle carries (course/bundle.py copies them to the same
paths), and each function below returns the numbers one claim of the unit rests on, so the text cites a printed
value, never a pasted one.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from utils.messages import bilingual

RESULTS = Path("benchmarks") / "results" / "h100" / "hopper"
FILES = (
    "backward/backward.json",
    "backward/backward.md",
    "fp8/fp8.json",
    "fp8/fp8.md",
    "float16/results.json",
    "profile/d64_causal.csv",
    "profile/d64_causal.md",
    "profile/d128_causal.csv",
    "profile/d128_causal.md",
)
REGISTERS_PER_SM = 65536  # an H100 SM's register file: 64 K 32-bit registers


def folder() -> Path:
    """The committed H100 results beside `utils/` (the repository, or the student bundle)."""
    found = Path(__file__).resolve().parent.parent / RESULTS
    if not found.is_dir():
        raise FileNotFoundError(
            bilingual(
                f"找不到课程在 H100 上的测量结果 {found}：它们随学生包和仓库一起提供",
                f"the course's H100 results are missing at {found}: they come with the student bundle and the "
                "repository",
            )
        )
    return found


def read_json(name: str) -> dict:
    return json.loads((folder() / name).read_text(encoding="utf-8"))


def backward_rows() -> list[dict]:
    """Every row of the one-pass backward benchmark (`backward/backward.json`): d, causal, variant, ms, and for
    the forced tilings registers, spills and the ratio to unit 08's two-kernel backward."""
    return read_json("backward/backward.json")["rows"]


def tma_over_atomics() -> list[dict]:
    """For each tiling measured both ways: how many times faster dQ by TMA reduce-add ran than by element-wise
    atomics ({"d", "causal", "tiling", "speedup"})."""
    rows = {(r["d"], r["causal"], r["variant"]): r for r in backward_rows()}
    pairs = []
    for (d, causal, variant), atomics in rows.items():
        if variant.endswith(" atomics"):
            tiling = variant.removesuffix(" atomics")
            tma = rows.get((d, causal, tiling + " TMA"))
            if tma is not None and "ms" in tma and "ms" in atomics:
                pairs.append(
                    {"d": d, "causal": causal, "tiling": tiling, "speedup": atomics["ms"] / tma["ms"]}
                )
    return pairs


def spills(d: int) -> list[dict]:
    """The forced tilings at head dimension `d` with dQ by TMA: registers, spills, ratio to unit 08."""
    return [r for r in backward_rows() if r["d"] == d and r["variant"].endswith(" TMA") and "spills" in r]


def occupancy(d: int) -> list[dict]:
    """Nsight Compute's launch statistics of the profiled forward kernels at `d` (causal, N = 4096): for each
    launch the kernel, threads per program, registers per thread and the programs per SM that registers and
    shared memory allow (`Block Limit Registers`, `Block Limit Shared Mem`), and the share of the time the tensor
    cores were busy."""
    wanted = {
        "Registers Per Thread": "registers",
        "Block Limit Registers": "limit_registers",
        "Block Limit Shared Mem": "limit_shared",
        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": "tensor_busy_percent",
    }
    lines = (folder() / f"profile/d{d}_causal.csv").read_text(encoding="utf-8").splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    launches: dict[str, dict] = {}
    for row in csv.DictReader(lines[header:]):
        launch = launches.setdefault(
            row["ID"],
            {
                "kernel": row["Kernel Name"],
                "grid": row["Grid Size"],
                "threads": int(row["Block Size"][1:].split(",")[0]),
            },
        )
        if row["Metric Name"] in wanted:
            launch[wanted[row["Metric Name"]]] = float(row["Metric Value"].replace(",", ""))
    return list(launches.values())


def forward_ratio(name: str, peer: str = "sdpa_flash", d: int = 128, n: int = 4096) -> float:
    """`name`'s forward throughput over `peer`'s in the committed float16 benchmark (non-causal, d, N = n)."""
    records = read_json("float16/results.json")["records"]
    ms = {
        r["name"]: r["time_ms"]
        for r in records
        if r["mode"] == "fwd" and r["d"] == d and r["n"] == n and not r["causal"] and r["status"] == "ok"
    }
    return ms[peer] / ms[name]


def fp8_speedups() -> list[dict]:
    """The course's FP8 forward's throughput over the bf16 Hopper forward's and cuDNN bf16's (`fp8/fp8.json`): for
    each measured (d, causal, N), {"d", "causal", "n", "over_bf16_hopper", "over_cudnn"}."""
    return [
        {
            "d": r["d"],
            "causal": r["causal"],
            "n": r["n"],
            "over_bf16_hopper": r["tflops"]["fp8 kernel"] / r["tflops"]["bf16 Hopper forward"],
            "over_cudnn": r["tflops"]["fp8 kernel"] / r["tflops"]["bf16 SDPA cuDNN"],
        }
        for r in read_json("fp8/fp8.json")["rows"]
    ]


def fp8_errors() -> list[dict]:
    """The course's FP8 forward (scaled per row of Q and K) against float64 on the unrounded inputs: for each
    (d, causal), {"d", "causal", "accuracy": {what: [median, max] relative error per row]}} (`fp8/fp8.json`)."""
    return [r for r in read_json("fp8/fp8.json")["rows"] if "accuracy" in r]


__all__ = [
    "FILES",
    "REGISTERS_PER_SM",
    "backward_rows",
    "folder",
    "forward_ratio",
    "fp8_errors",
    "fp8_speedups",
    "occupancy",
    "read_json",
    "spills",
    "tma_over_atomics",
]
