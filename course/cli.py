"""Argument parsing for `python -m course`; each sub-command lives in its own module."""

from __future__ import annotations

import argparse

from course import doctor


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m course",
        description="FlashAttention 课程工具 / FlashAttention course tooling",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="检查环境 / check the environment")
    check.set_defaults(run=lambda args: doctor.main())
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)
