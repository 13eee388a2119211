"""Grading throughput: a class of unit-08 submissions graded by `course grade`, timed (run it on the GPU host).

    python -m benchmarks.grading_throughput --students 12 [--jobs 8] [--out benchmarks/results/h100]

The class mixes the reference solution, legitimate variants (`course/variants/`, which must keep full marks) and
wrong implementations (`course/wrong/`, which must lose their cells), one after another. The script grades it
`--rounds` times in one course root (same salt: a regrade must give every cell the same score) and writes
`grading_throughput.json`: seconds per submission, the jobs used, each student's per-cell scores and seconds, whether every
legitimate submission kept full marks and every wrong one lost points, and whether the rounds agreed.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path

import utils
from course import notebooks, release, wrong
from course.grading import grade, submissions
from course.layout import COURSE, Course

UNIT = "08_flash_attention_triton"


def class_plan(
    students: int, unit: str = UNIT
) -> list[tuple[str, str, dict[str, str], tuple[str, ...] | None]]:
    """(student id, kind, overrides {grade_id: source}, cells that must lose points or None) for each student."""
    shuffle = random.Random(0).shuffle  # the same class every run, spread over every exercise
    variants = [("variant", w) for w in wrong.load(COURSE.variants / unit, "variant")]
    wrongs = [("wrong", w) for w in wrong.load(COURSE.wrong / unit)]
    shuffle(variants)
    shuffle(wrongs)
    pool = [("solution", None)]
    for i in range(max(len(variants), len(wrongs))):
        pool += [*variants[i : i + 1], *wrongs[i : i + 1]]
    plan = []
    for i in range(students):
        kind, impl = pool[i % len(pool)]
        name = f"s{i:03d}_{kind}" + (f"_{impl.name}" if impl else "")
        overrides = {impl.replaces: impl.body} if impl else {}
        plan.append((name, kind, overrides, tuple(impl.must_fail) if kind == "wrong" else None))
    return plan


def build(root: Path, plan) -> Course:
    """A course holding unit 08 only, and the class's submissions under `root/class`."""
    course = Course(root / "course", COURSE.wrong)
    shutil.copytree(COURSE.source / UNIT, course.source / UNIT)
    release.build(COURSE, [UNIT], course.release)
    for name, _, overrides, _ in plan:
        submissions.write_student(
            course.release / UNIT, course.source / UNIT, root / "class" / name / UNIT, overrides
        )
    return course


def verdict(kind: str, must_fail, row: grade.Row, points: dict[str, float], unawardable: set[str]) -> str:
    """ "ok", or what went wrong: a legitimate submission short of full marks, a wrong one that lost nothing on a
    cell it must fail."""
    cells = {key.split("/", 1)[1]: score for key, score in row.cells.items()}
    if row.status != "graded":
        return f"status {row.status}"
    if kind == "wrong":
        kept = [g for g in must_fail or () if g not in unawardable and cells.get(g, 0) >= points[g]]
        return f"kept full marks on {kept}" if kept else "ok"
    short = [g for g, pts in points.items() if g not in unawardable and cells.get(g, 0) < pts]
    return f"short on {short}" if short else "ok"


def verdicts(
    plan, rows: dict[str, grade.Row], points: dict[str, float], unawardable: set[str]
) -> dict[str, str]:
    """Per student: its `verdict`."""
    return {
        name: verdict(kind, must_fail, rows[name], points, unawardable) for name, kind, _, must_fail in plan
    }


def judge_reports(course: Course, student: str, nb_name: str, verdict: str) -> dict[str, str]:
    """{grade_id: the judge's report} of the cells a verdict names (what to look at when one is not "ok")."""
    path = course.autograded / student / UNIT / nb_name
    if verdict == "ok" or not path.exists():
        return {}
    found = {}
    for cell in notebooks.read(path).cells:
        grade_id = notebooks.meta(cell).get("grade_id")
        if grade_id and grade_id in verdict:
            found[grade_id] = "".join(o.get("text", "") for o in cell.get("outputs", []))[-3000:]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=12)
    parser.add_argument("--jobs", type=int, default=None, help="default: course grade's own rule")
    parser.add_argument("--rounds", type=int, default=1, help="grade the class this many times (determinism)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/local"))
    args = parser.parse_args()
    plan = class_plan(args.students)
    nb_name = COURSE.notebooks(UNIT)[0]
    points = notebooks.graded_points(notebooks.read(COURSE.source / UNIT / nb_name))
    unawardable = (
        set()
        if utils.mode().is_gpu
        else set(notebooks.gpu_only_tests(notebooks.read(COURSE.source / UNIT / nb_name)))
    )
    jobs = args.jobs or grade.default_jobs(len(plan), grade.cpu_count(), grade.gpu_memory_gib())
    rounds = []
    with tempfile.TemporaryDirectory(prefix="throughput-") as tmp:
        course = build(Path(tmp), plan)
        for _ in range(args.rounds):
            started = time.monotonic()
            rows = {row.student: row for row in grade.grade(course, Path(tmp) / "class", jobs=jobs)}
            seconds = time.monotonic() - started
            rounds.append(
                {
                    "seconds": round(seconds, 1),
                    "seconds_per_submission": round(seconds / len(plan), 2),
                    "cells": {name: row.cells for name, row in rows.items()},
                    "where_the_time_went": {name: row.seconds for name, row in rows.items()},
                    "verdicts": verdicts(plan, rows, points, unawardable),
                    "flagged": {name: row.flags for name, row in rows.items() if row.flags},
                }
            )
            rounds[-1]["reports"] = {  # the judge's words on each verdict that is not "ok"
                name: report
                for name, verdict in rounds[-1]["verdicts"].items()
                if (report := judge_reports(course, name, nb_name, verdict))
            }
            print(
                f"round {len(rounds)}: {seconds:.0f} s, {seconds / len(plan):.1f} s per submission, jobs {jobs}"
            )
    result = {
        "device": utils.mode().name,
        "cpus": grade.cpu_count(),
        "students": len(plan),
        "jobs": jobs,
        "class": [{"student": name, "kind": kind} for name, kind, _, _ in plan],
        "rounds": rounds,
        "all_verdicts_ok": all(v == "ok" for r in rounds for v in r["verdicts"].values()),
        "rounds_agree": all(r["cells"] == rounds[0]["cells"] for r in rounds),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "grading_throughput.json"
    path.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("students", "jobs", "all_verdicts_ok", "rounds_agree")}))
    for r in rounds:
        print({name: v for name, v in r["verdicts"].items() if v != "ok"} or "every verdict ok")
    print(f"written: {path}")
    return 0 if result["all_verdicts_ok"] and result["rounds_agree"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
