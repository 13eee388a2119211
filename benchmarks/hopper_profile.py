"""Profile the Hopper forward beside cuDNN and the unit-08 kernel with Nsight Compute (issue 21).

Two steps, both on the GPU host, run for d = 64 and 128 (causal) by `bash benchmarks/hopper_profile.sh OUT`:

    ncu --profile-from-start off --csv --page details --section SpeedOfLight ... \\
        python -m benchmarks.hopper_profile launch --d 64 --causal > d64_causal.csv
    python -m benchmarks.hopper_profile summarize d64_causal.csv --out d64_causal.md

`launch` compiles and autotunes everything first, then profiles one launch each of: SDPA cuDNN, the unit-08
forward, and the Hopper forward with one and with two programs per SM (the same 128 × 64 tiles, forced), in that
order. It prints nothing on stdout, which carries ncu's CSV. `summarize` turns the CSV into a markdown table of
the numbers the README discusses: duration, tensor-pipe and issue-slot use, occupancy and the top warp stalls.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from benchmarks import attention

# One launch each, in this order: (label, config of the Hopper kernel or None)
LABELS = ("SDPA cuDNN", "unit 08 (FlashAttention-2)", "Hopper, 1 program/SM", "Hopper, 2 programs/SM")
FORCED = {  # d -> (BLOCK_Q, BLOCK_K, num_warps, num_stages) of the Hopper runs: the sweep's best 128 × 64 tiles
    64: (128, 64, 4, 3),
    128: (128, 64, 8, 2),  # two programs of 8 warps fit in shared memory only with 2 stages
}
METRICS = {  # summary column -> ncu metric name (as in the details page)
    "time (µs)": "Duration",
    "SM throughput %": "Compute (SM) Throughput",
    "issue slots busy %": "Issue Slots Busy",
    "achieved occupancy %": "Achieved Occupancy",
    "registers/thread": "Registers Per Thread",
    "shared memory/block": "Dynamic Shared Memory Per Block",
    "DRAM throughput %": "DRAM Throughput",
}
STALL_PREFIX = "smsp__average_warps_issue_stalled_"  # + reason + "_per_issue_active.ratio"
MICROSECONDS_PER = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}


def microseconds(value: str) -> str:
    """ncu's duration ("783,840 ns", in whichever time unit it chose) in µs, as the "time (µs)" row states."""
    number, unit = value.rsplit(" ", 1)
    return f"{float(number.replace(',', '')) * MICROSECONDS_PER[unit]:,.1f}"


def _forced_hopper(q, k, v, is_causal, d, per_sm):
    from course.reference import hopper as reference

    config = reference.kernel_config(*FORCED[d], per_sm=per_sm)
    return reference.hopper_forward(q, k, v, is_causal, d**-0.5, config)[0]


def launch(d: int, is_causal: bool, n: int, dtype: torch.dtype) -> None:
    from course.reference import flash_triton

    batch, heads = attention.default_grid().batch_heads(n, d)
    q, k, v = (torch.randn(batch * heads, n, d, device="cuda", dtype=dtype) for _ in range(3))
    calls = [
        lambda: _cudnn(q, k, v, is_causal),
        lambda: flash_triton.triton_forward(q, k, v, is_causal, d**-0.5),
        lambda: _forced_hopper(q, k, v, is_causal, d, 1),
        lambda: _forced_hopper(q, k, v, is_causal, d, 2),
    ]
    expected = calls[0]().float()
    for label, call in zip(LABELS, calls, strict=True):  # compile, autotune and check before profiling
        out = call()
        out = out[0] if isinstance(out, tuple) else out
        error = (out.float() - expected).abs().max().item()
        if error > 2e-2:
            raise SystemExit(f"{label}: wrong output (max error {error:.3g}), not profiled")
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for call in calls:
        call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print(f"profiled {len(calls)} launches: d={d}, causal={is_causal}, N={n}, {dtype}", file=sys.stderr)


def _cudnn(q, k, v, is_causal):
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        return F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=is_causal)[0]


def read_details(path: Path) -> dict[str, dict[str, str]]:
    """ncu's details CSV -> {launch id: {"kernel": name, metric name: "value unit"}}; non-CSV lines skipped."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith('"')]
    launches: dict[str, dict[str, str]] = {}
    for row in csv.DictReader(lines):
        entry = launches.setdefault(row["ID"], {"kernel": row["Kernel Name"]})
        name, value = row["Metric Name"], row["Metric Value"]
        if name.startswith(STALL_PREFIX):
            reason = name.removeprefix(STALL_PREFIX).removesuffix("_per_issue_active.ratio")
            entry.setdefault("stalls", []).append((float(value.replace(",", "")), reason))
        else:
            entry.setdefault(name, f"{value} {row['Metric Unit']}".strip())
    return launches


def summarize(path: Path, labels: tuple[str, ...] = LABELS) -> str:
    """A markdown table, one column per profiled launch, headed by `labels` in launch order."""
    launches = list(read_details(path).values())
    labels = labels[: len(launches)]
    lines = ["| | " + " | ".join(labels) + " |", "|---" * (len(labels) + 1) + "|"]
    lines.append("| kernel | " + " | ".join(f"`{e['kernel'][:40]}`" for e in launches) + " |")
    tensor_pipes = sorted(  # the tensor pipes some launch used (FP64 and integer pipes stay at 0 here)
        {
            name
            for e in launches
            for name in e
            if name.startswith("sm__pipe_tensor") and not e[name].startswith("0 ")
        }
    )
    for column, metric in [*METRICS.items(), *((name, name) for name in tensor_pipes)]:
        cells = [e.get(metric, "–") for e in launches]
        if metric == "Duration":
            cells = [microseconds(c) if c != "–" else c for c in cells]
        lines.append(f"| {column} | " + " | ".join(cells) + " |")
    lines.append(
        "| top warp stalls (cycles per issued instruction) | "
        + " | ".join(
            ", ".join(f"{r} {v:.1f}" for v, r in sorted(e.get("stalls", []), reverse=True)[:4])
            for e in launches
        )
        + " |"
    )
    return "\n".join(lines) + "\n"


def profile_cli(argv, description: str, add_launch_arguments, run_launch, labels=lambda path: LABELS) -> int:
    """The two sub-commands of a profile script: `launch` (run under ncu) and `summarize` (its CSV -> markdown,
    one column per launch headed by `labels(csv)`)."""
    parser = argparse.ArgumentParser(description=description)
    commands = parser.add_subparsers(dest="command", required=True)
    add_launch_arguments(commands.add_parser("launch", help="the launches to profile (run under ncu)"))
    table = commands.add_parser("summarize", help="ncu's details CSV -> a markdown table")
    table.add_argument("csv", type=Path)
    table.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "launch":
        run_launch(args)
        return 0
    text = summarize(args.csv, labels(args.csv))
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


def add_launch_arguments(parser) -> None:
    parser.add_argument("--d", type=int, choices=sorted(FORCED), default=64)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16"])


def main(argv: list[str] | None = None) -> int:
    return profile_cli(
        argv,
        __doc__.splitlines()[0],
        add_launch_arguments,
        lambda args: launch(args.d, args.causal, args.n, getattr(torch, args.dtype)),
    )


if __name__ == "__main__":
    sys.exit(main())
