"""Grading throughput: a class of unit-08 submissions graded by `course grade`, timed (run it on the GPU host).

    python -m benchmarks.grading_throughput --students 12 [--jobs 8] [--out benchmarks/results/h100] [--unit 01]

The class mixes the reference solution, legitimate variants (`course/variants/`, which must keep full marks) and
wrong implementations (`course/wrong/`, which must lose their cells), one after another. The script grades it
`--rounds` times in one course root (same salt: a regrade must give every cell the same score) and writes
`grading_throughput.json`: seconds per submission, the jobs used, each student's per-cell scores and seconds, whether every
legitimate submission kept full marks and every wrong one lost points, and whether the rounds agreed; and
`stages`, where a pair's time went, averaged over the pairs (`stage_means`).
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
from course.grading import grade, resources, submissions
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


def build(root: Path, plan, unit: str = UNIT) -> Course:
    """A course holding `unit` only, and the class's submissions under `root/class`."""
    course = Course(root / "course", COURSE.wrong)
    shutil.copytree(COURSE.source / unit, course.source / unit)
    release.build(COURSE, [unit], course.release)
    for name, _, overrides, _ in plan:
        submissions.write_student(
            course.release / unit, course.source / unit, root / "class" / name / unit, overrides
        )
    return course


# The stages of one pair (`grade.Row.seconds`: "job", "merge" and "NOTEBOOK/stage/NAME", course.judge.kernel and
# course.judge.preprocessor), in the order a pair goes through them. Wall-clock seconds of that pair, while the
# other jobs ran; "… compiles" and "… C builds" are counts; "judge child start" and "judge compile seconds" add up
# the judge's children, which run at once (`Unit.parallel_cells_on_gpu`), and the judge runs beside the notebook.
# "pair …": the Triton cache the judge's children share (`course grade`, ended by `Judge`); "notebook …": the
# kernel's own; "judge …": the judge's when run without `StartJudge`.
STAGES = (
    "job",
    "autograde",
    "notebook",
    "kernel start",
    "imports",
    "self-checks",
    "other cells",
    "notebook compiles",
    "notebook compile seconds",
    "notebook C builds",
    "judge",
    "judge child start",
    "judge compiles",
    "judge compile seconds",
    "judge C builds",
    "pair compiles",
    "pair compile seconds",
    "pair C builds",
    "hidden cases",
    "timed rounds",
    "judge after the notebook",
    "feedback page",
    "merge",
)
TIMED_CELLS = ("test_performance",)  # the cells whose time is the timed rounds (their warm-up compiles too)


def stage_of(key: str) -> str | None:
    """The stage a `grade.Row.seconds` key adds to (None: a visible self-check, counted in "self-checks")."""
    if key in ("job", "merge"):
        return key
    if key == grade.FEEDBACK_PAGE:
        return "feedback page"
    _, _, rest = key.partition("/")
    if not rest:
        return "autograde"  # nbgrader's autograde of one notebook: its run, the judge and what nbgrader adds
    if rest.startswith("stage/"):
        return rest.removeprefix("stage/")
    if rest == "judge":
        return "judge"
    if "/" not in rest:  # a judged cell's cases
        return "timed rounds" if rest in TIMED_CELLS else "hidden cases"
    return None


def pair_stages(row: grade.Row) -> dict[str, float]:
    """{stage: seconds or count} of one pair (its notebooks added up)."""
    found: dict[str, float] = {}
    for key, value in row.seconds.items():
        if (name := stage_of(key)) is not None:
            found[name] = found.get(name, 0.0) + value
    return found


def stage_means(rows: list[grade.Row]) -> dict[str, float]:
    """Each stage of `STAGES` (and any other a row names) averaged over the pairs."""
    stages = [pair_stages(row) for row in rows]
    names = [*STAGES, *sorted({name for found in stages for name in found} - set(STAGES))]
    return {
        name: round(sum(found.get(name, 0.0) for found in stages) / max(1, len(stages)), 2)
        for name in names
        if any(name in found for found in stages)
    }


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


def judge_reports(
    course: Course, student: str, nb_name: str, verdict: str, unit: str = UNIT
) -> dict[str, str]:
    """{grade_id: the judge's report} of the cells a verdict names (what to look at when one is not "ok")."""
    path = course.autograded / student / unit / nb_name
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
    parser.add_argument("--unit", default=UNIT, help="another unit's class (e.g. 01: the stages on a CPU)")
    args = parser.parse_args()
    (unit,) = COURSE.select([args.unit])
    plan = class_plan(args.students, unit)
    nb_name = COURSE.notebooks(unit)[0]
    points = notebooks.graded_points(notebooks.read(COURSE.source / unit / nb_name))
    unawardable = (
        set()
        if utils.mode().is_gpu
        else set(notebooks.gpu_only_tests(notebooks.read(COURSE.source / unit / nb_name)))
    )
    jobs = args.jobs or resources.default_jobs(len(plan), resources.cpu_count(), resources.gpu_memory_gib())
    rounds = []
    with tempfile.TemporaryDirectory(prefix="throughput-") as tmp:
        course = build(Path(tmp), plan, unit)
        for _ in range(args.rounds):
            started = time.monotonic()
            rows = {row.student: row for row in grade.grade(course, Path(tmp) / "class", jobs=jobs)}
            seconds = time.monotonic() - started
            rounds.append(
                {
                    "seconds": round(seconds, 1),
                    "seconds_per_submission": round(seconds / len(plan), 2),
                    "cells": {name: row.cells for name, row in rows.items()},
                    "stages": stage_means(list(rows.values())),
                    "where_the_time_went": {name: row.seconds for name, row in rows.items()},
                    "verdicts": verdicts(plan, rows, points, unawardable),
                    "flagged": {name: row.flags for name, row in rows.items() if row.flags},
                }
            )
            rounds[-1]["reports"] = {  # the judge's words on each verdict that is not "ok"
                name: report
                for name, verdict in rounds[-1]["verdicts"].items()
                if (report := judge_reports(course, name, nb_name, verdict, unit))
            }
            print(
                f"round {len(rounds)}: {seconds:.0f} s, {seconds / len(plan):.1f} s per submission, jobs {jobs}"
            )
            print("\n".join(f"  {name:26} {value:8.1f}" for name, value in rounds[-1]["stages"].items()))
    result = {
        "device": utils.mode().name,
        "cpus": resources.cpu_count(),
        "unit": unit,
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
