"""`python -m course bench` (the attention benchmark suite) and `tune` (see benchmarks/README.md).

On a GPU it runs the FlashAttention-paper grid; on the CPU a tiny, clearly labelled grid so CI can
check that the suite itself works. Exit status 1 if any implementation gave a wrong result or failed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from utils.messages import bilingual


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "bench",
        help=bilingual("注意力基准测试（先验证再计时）", "attention benchmark suite (checked, then timed)"),
        description=bilingual(
            "对比课程的 Triton 内核与 PyTorch SDPA：吞吐量、峰值显存、图和 results.json",
            "compare the course's Triton kernels with PyTorch SDPA: throughput, peak memory, figures, results.json",
        ),
    )
    parser.add_argument("--out", type=Path, help="output folder (default: benchmarks/results/<device>)")
    parser.add_argument("--impls", nargs="+", help="implementations to run (default: all)")
    parser.add_argument("--ns", nargs="+", type=int, help="sequence lengths N (default: the device's grid)")
    parser.add_argument("--head-dims", nargs="+", type=int, help="head dims d (default: the device's grid)")
    parser.add_argument("--modes", nargs="+", help="fwd and/or fwd_bwd (default: both)")
    parser.add_argument("--dtype", help="float32, float16 or bfloat16 (default: bfloat16 on a GPU)")
    parser.add_argument(
        "--memory-ns", nargs="+", type=int, help="N of the memory sweep (default: the device's)"
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory sweep")
    parser.add_argument("--no-figures", action="store_true", help="write results.json only")
    parser.add_argument(
        "--leaderboard",
        action="store_true",
        help="only CS336's leaderboard call: (16, 16384, 64) bf16 causal, o.sum().backward() (leaderboard.json)",
    )
    parser.set_defaults(run=main)
    add_tune_parser(subparsers)


def main(args: argparse.Namespace) -> int:
    from benchmarks import attention, figures, leaderboard, report
    from benchmarks.implementations import IMPLEMENTATIONS

    if args.leaderboard:
        results = leaderboard.run(args.out or attention.default_out_dir(), args.impls or leaderboard.IMPLS)
        print(leaderboard.format_table(results))
        return 0 if all(r["status"] in ("ok", "unavailable") for r in results["records"].values()) else 1
    impls = args.impls or list(IMPLEMENTATIONS)
    unknown = [name for name in impls if name not in IMPLEMENTATIONS]
    if unknown:
        raise ValueError(
            bilingual(
                f"未知的实现 {unknown}，可选 {tuple(IMPLEMENTATIONS)}",
                f"unknown implementations {unknown}, choose from {tuple(IMPLEMENTATIONS)}",
            )
        )
    grid = attention.customise(
        attention.default_grid(), args.ns, args.head_dims, args.modes, args.dtype, args.memory_ns
    )
    out_dir = args.out or attention.default_out_dir()
    print(bilingual(f"网格：{grid.label}", f"grid: {grid.label}"))
    results = attention.run_suite(grid, impls, out_dir, memory=not args.no_memory)
    report.add_ratios(results["records"])
    results["summary"] = report.summarize(results["records"], grid.summary_min_n)
    results["targets"] = report.evaluate_targets(results["summary"], results["memory"], grid.summary_min_n)
    attention.write_json(results, out_dir)
    if not args.no_figures:
        figures.save_figures(results, out_dir)
    print(report.format_report(results))
    print(bilingual(f"结果已写入 {out_dir}", f"results written to {out_dir}"))
    failed = [r for r in results["records"] + results["memory"] if r["status"] in ("wrong", "error")]
    for record in failed:
        print(f"  {record['status']}: {record['name']} N={record['n']} d={record['d']}: {record['reason']}")
    return 1 if failed else 0


def add_tune_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "tune",
        help=bilingual("为本 GPU 调优内核配置", "tune the kernels' tile configs for this GPU"),
        description=bilingual(
            "计时 triton_configs.SEARCH_SPACE 的每个配置，把最快的写入 course/reference/tuned/<gpu>.json",
            "time every config of triton_configs.SEARCH_SPACE; write the fastest to course/reference/tuned/<gpu>.json",
        ),
    )
    parser.add_argument(
        "--out", type=Path, help="folder for tuning.json (default: benchmarks/results/<device>)"
    )
    parser.add_argument("--head-dims", nargs="+", type=int, help="head dims (default: 16 32 64 128)")
    parser.add_argument("--bits", nargs="+", type=int, choices=(16, 32), help="element sizes (default: both)")
    parser.add_argument("--jobs", type=int, help="parallel compile processes (default: up to 16)")
    parser.set_defaults(run=tune_main)


def tune_main(args: argparse.Namespace) -> int:
    import utils

    if not utils.mode().is_gpu:
        print(
            bilingual(
                "调优需要 GPU：CPU 解释器的计时没有意义",
                "tuning needs a GPU: interpreter timings mean nothing",
            )
        )
        return 1
    from benchmarks import attention, tune

    tune.tune(
        args.out or attention.default_out_dir(),
        tuple(args.bits or tune.BITS),
        tuple(args.head_dims or tune.HEAD_DIMS),
        args.jobs,
    )
    return 0
