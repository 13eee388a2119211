"""A 300-student week on Canvas, measured: import, grading, two graders' sheets, feedback and the Canvas export.

    python -m benchmarks.grading_week [--students 300] [--real 1] [--jobs 2] [--out benchmarks/results/local/week]

It builds a course folder (roster, `semester.toml` with due dates) and, for units 01 and 02 (both CPU-gradable; unit
01 has a written answer graded by hand), the download Canvas gives: every student's notebook named as Canvas names
it, every seventh `_LATE_`, every fifth handed in twice (`-1`), and the submissions JSON of Canvas's REST API (the
late ones a day or two after the due date). Then it runs the week's commands in this process, as an instructor types
them (`python -m course …`, through `course.cli`), and times each:

1. `import` of both downloads with `--times` (one class folder, the LMS's submission times in `timestamps.csv`);
2. `grade --timestamps`: the first `--real` students' two units are graded for real (their CPU seconds are reported
   and scaled to the class: on 2 cores grading 600 pairs takes hours); every other pair's grading is stood in for
   (`ReplayPool`): its job records the reference's result (every test cell full, the written answer waiting for a
   person) in the pair's private gradebook, copies the submission as its autograded notebook and writes a stand-in
   feedback page. Everything else in `grade` runs for real: intake, the merges into the course's gradebook, late
   penalties, grades.csv, the pages' digests (so a stood-in pair still costs ~0.4 CPU s: its private copy of the
   course's gradebook, its share of a merge job). Grading is reported, not part of the target;
3. `handgrade export 01 --graders ta1 ta2 --by student`, the graders' ticks (written here, not timed), and the two
   sheets' `handgrade import`, one grader after the other;
4. `feedback --jobs`: the pages whose inputs changed (every unit-01 page: its written answer is graded now);
5. `export --canvas`.

Target: everything but grading ≤ 2 minutes on the 2-core machine. Writes `grading_week.json` (each step's wall and
CPU seconds, this process's and its jobs', what it did, the grading sample and its estimate for the class, the
machine's load: on a machine other work shares, the wall clock overstates) and `grading_week.png`.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime as dt
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
from nbgrader.api import Gradebook  # noqa: E402

from course import ROOT, cli, notebooks  # noqa: E402
from course.folder import ENV  # noqa: E402
from course.grading import grade, gradebook_db, pool, resources, submissions, worker  # noqa: E402
from course.layout import COURSE  # noqa: E402
from utils.plotting import text, use_fonts  # noqa: E402

UNITS = ("01_memory_bottleneck", "02_io_aware")
WRITTEN = "written_oom_accounting"  # unit 01's written answer, graded by hand by rubric
DUE = dt.datetime(2026, 3, 6, 23, 59, tzinfo=dt.UTC)
TARGET_SECONDS = 120.0
GRADERS = ("ta1", "ta2")
REPLAY_JOBS = 32  # stood-in pairs at once: they cost little, and their merges go in batches of as many
TIMED = ("import", "hand-grading sheets", "sheets imported", "feedback", "export")


@dataclass(frozen=True)
class Student:
    id: str
    name: str
    canvas_id: int
    late: bool
    resubmitted: bool

    @property
    def lastfirst(self) -> str:
        return self.name.replace(" ", "").lower()


def class_of(size: int) -> list[Student]:
    """`size` made-up students: every seventh late, every fifth handed in twice."""
    return [
        Student(f"s{i:03d}", f"Student{i:03d} Made Up", 1000 + i, i % 7 == 3, i % 5 == 1) for i in range(size)
    ]


def answered(unit: str, work: Path) -> nbformat.NotebookNode:
    """The unit's release notebook as a student fills it in with the reference answers."""
    submissions.write_student(COURSE.release / unit, COURSE.source / unit, work / unit, {})
    (path,) = sorted((work / unit).glob("*.ipynb"))
    return notebooks.read(path)


def written_answer(student: Student) -> str:
    return f"{student.id}: 峰值在 softmax 反向，P、dP、dS 三个 N×N。 / The peak is in the softmax backward: P, dP, dS."


def canvas_download(path: Path, unit: str, people: list[Student], work: Path) -> None:
    """The zip Canvas's "Download Submissions" gives for `unit`: `<lastfirst>[_LATE]_<user id>_<submission id>_
    <file>`, a file handed in again numbered `-1` (the latest counts)."""
    filled = answered(unit, work)
    name = COURSE.notebooks(unit)[0]
    stem = name.removesuffix(".ipynb")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for student in people:
            nb = filled
            if unit == UNITS[0]:
                nb = notebooks.with_cell(filled, WRITTEN, written_answer(student))
            prefix = f"{student.lastfirst}{'_LATE' if student.late else ''}_{student.canvas_id}"
            if student.resubmitted:
                archive.writestr(f"{prefix}_{5_000_000 + student.canvas_id}_{name}", nbformat.writes(filled))
                archive.writestr(
                    f"{prefix}_{6_000_000 + student.canvas_id}_{stem}-1.ipynb", nbformat.writes(nb)
                )
            else:
                archive.writestr(f"{prefix}_{5_000_000 + student.canvas_id}_{name}", nbformat.writes(nb))


def canvas_times(path: Path, unit: str, people: list[Student]) -> None:
    """Canvas's submissions JSON (REST API) for `unit`: the late ones a day or two after the due date."""
    due = DUE + dt.timedelta(days=7 * UNITS.index(unit))
    records = []
    for i, student in enumerate(people):
        when = due + (dt.timedelta(hours=25 + i % 24) if student.late else -dt.timedelta(hours=1 + i % 48))
        records.append(
            {
                "user_id": student.canvas_id,
                "submitted_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "attempt": 2 if student.resubmitted else 1,
                "workflow_state": "submitted",
            }
        )
    path.write_text(json.dumps(records, indent=1), encoding="utf-8")


def build(root: Path, people: list[Student]) -> Path:
    """The course folder (roster, semester.toml) under `root`, the downloads in `root/downloads`; the course folder."""
    folder = root / "course"
    folder.mkdir(parents=True)
    with (folder / "roster.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student_id", "name", "canvas_id"])
        writer.writerows([s.id, s.name, s.canvas_id] for s in people)
    due = "\n".join(
        f'"{unit}" = {(DUE + dt.timedelta(days=7 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")}'
        for i, unit in enumerate(UNITS)
    )
    (folder / "semester.toml").write_text(f"[late]\npenalty_per_day = 0.1\nmax_penalty = 0.3\n[due]\n{due}\n")
    downloads = root / "downloads"
    downloads.mkdir()
    for unit in UNITS:
        canvas_download(downloads / f"{unit}.zip", unit, people, root / "work")
        canvas_times(downloads / f"{unit}.json", unit, people)
    return folder


class ReplayPool(pool.LocalPool):
    """The local pool with each autograde job stood in for: the pair's result is the reference's as grading records
    it (every test cell its points, the hand-graded cells waiting), written to the job's private gradebook as the job
    would; the submission is copied as its autograded notebook and a stand-in page is its feedback. No notebook
    runs; the merges, which do not go through the pool, are real."""

    def run(self, job: pool.Job) -> tuple[dict, bool, str]:
        request = job.request
        root, unit, student = Path(request["root"]), request["unit"], request["student"]
        entries = {}
        with Gradebook(worker.gradebook_url(request["gradebook"]), gradebook_db.COURSE_ID) as gb:
            submission = gb.update_or_create_submission(unit, student)
            for notebook in submission.notebooks:
                hand = notebooks.all_points(
                    notebooks.read(Path(request["source"]) / unit / f"{notebook.name}.ipynb"), hand_only=True
                )
                scores = {}
                for cell in notebook.grades:
                    cell.auto_score = None if cell.name in hand else cell.max_score
                    cell.needs_manual_grade = cell.name in hand
                    scores[cell.name] = [float(cell.auto_score or 0.0), float(cell.max_score)]
                entries[f"{notebook.name}.ipynb"] = {"status": "graded", "scores": scores, "seconds": 0.0}
            gb.db.commit()
        shutil.copytree(root / "submitted" / student / unit, root / "autograded" / student / unit)
        page = root / "feedback" / student / unit
        page.mkdir(parents=True)
        for name in request["notebooks"]:
            (page / name.replace(".ipynb", ".html")).write_text("<p>stand-in feedback (benchmark)</p>")
        return {student: entries}, False, ""


def command(folder: Path, argv: list[str], log: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of `python -m course --course-dir FOLDER ARGV…` run in this process, its output to `log`
    (CPU: this process's and its finished children's, the jobs it started); a command that fails stops the
    benchmark."""
    kept = os.environ.get(ENV)
    began, cpu = time.monotonic(), cpu_seconds()
    try:
        with (
            log.open("a", encoding="utf-8") as out,
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(out),
        ):
            print(f"$ python -m course {' '.join(argv)}", flush=True)
            status = cli.main(["--course-dir", str(folder), *argv])
    finally:
        os.environ.pop(ENV, None) if kept is None else os.environ.update({ENV: kept})
    if status != 0:
        raise RuntimeError(f"`course {' '.join(argv)}` exited {status}: see {log}")
    return time.monotonic() - began, cpu_seconds() - cpu


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def tick(sheet: Path) -> int:
    """A grader's work on their sheet: items ticked by the student's number, a comment for some; rows marked."""
    with sheet.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    items = [column for column in rows[0] if column.startswith(f"memory_bottleneck/{WRITTEN}:")]
    for i, row in enumerate(rows):
        row.update({column: "x" if (i >> k) % 2 == 0 else "" for k, column in enumerate(items)})
        row["comment"] = "" if i % 3 else "见批注 / see the notes"
    with sheet.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def grading_sample(folder: Path, students: list[str]) -> list[dict]:
    """Each really graded pair (of `students`): its job's seconds, status and score, from its saved row."""
    found = []
    for student in students:
        for path in sorted((folder / "autograded" / ".progress").glob(f"{student}__*.json")):
            row = json.loads(path.read_text(encoding="utf-8"))
            found.append(
                {"pair": f"{row['student']}/{row['unit']}", "status": row_status(row), "score": row["score"]}
                | {"job_seconds": row["seconds"]["job"], "max_score": row["max_score"]}
            )
    return found


def row_status(row: dict) -> str:
    return "graded" if not row["problems"] else "; ".join(f"{k}: {v}" for k, v in row["problems"].items())


def week(root: Path, size: int, real: int, jobs: int, log: Path) -> dict:
    people = class_of(size)
    began = time.monotonic()
    folder = build(root, people)
    spent = {"build (not timed)": (time.monotonic() - began, 0.0)}
    downloads, into = root / "downloads", root / "class"
    imports = [
        command(
            folder,
            ["import", str(downloads / f"{u}.zip"), "--unit", u, "--into", str(into), "--lms", "canvas"]
            + ["--times", str(downloads / f"{u}.json")],
            log,
        )
        for u in UNITS
    ]
    spent["import"] = tuple(map(sum, zip(*imports, strict=True)))
    grade_argv = ["grade", str(into), "--timestamps", str(into / "timestamps.csv"), "--jobs"]
    sample = [f"--student={s.id}" for s in people[:real]]
    spent["grading: real sample"] = (
        command(folder, [*grade_argv, str(jobs), *sample], log) if sample else (0, 0)
    )
    with mock.patch.object(grade, "open_pool", lambda address: ReplayPool()):
        spent["grading: the rest stood in for"] = command(folder, [*grade_argv, str(REPLAY_JOBS)], log)
    spent["hand-grading sheets"] = command(
        folder, ["handgrade", "export", "01", "--graders", *GRADERS, "--by", "student"], log
    )
    sheets = sorted((folder / "handgrade" / UNITS[0]).glob("*__ta*.csv"))
    rows = {sheet.name: tick(sheet) for sheet in sheets}
    imported = [command(folder, ["handgrade", "import", str(sheet)], log) for sheet in sheets]
    spent["sheets imported"] = tuple(map(sum, zip(*imported, strict=True)))
    spent["feedback"] = command(folder, ["feedback", "--jobs", str(jobs)], log)
    canvas = root / "canvas.csv"
    spent["export"] = command(folder, ["export", "--canvas", str(canvas)], log)
    return {
        "seconds": {step: round(wall, 2) for step, (wall, _) in spent.items()},
        "cpu_seconds": {step: round(cpu, 2) for step, (_, cpu) in spent.items()},
        "sheet_rows": rows,
        "pages_made_by_feedback": log.read_text(encoding="utf-8").count("made again: "),
        "canvas_students": canvas_students(canvas),
        "grades_rows": sum(1 for _ in (folder / "grades.csv").open(encoding="utf-8")) - 1,
        "late_pairs": late_pairs(folder),
        "sample": grading_sample(folder, [s.id for s in people[:real]]),
    }


def canvas_students(path: Path) -> int:
    """The students' lines of a Canvas import (after its header and its "Points Possible" line)."""
    with path.open(newline="", encoding="utf-8") as f:
        return sum(1 for row in csv.reader(f) if row[0].strip() not in ("Student", "Points Possible"))


def late_pairs(folder: Path) -> int:
    with (folder / "grades.csv").open(newline="", encoding="utf-8") as f:
        return sum(1 for row in csv.DictReader(f) if float(row.get("penalty_rate") or 0) > 0)


def estimate(result: dict, pairs: int, cores: int) -> dict | None:
    """The class's grading from the real sample: the CPU seconds its `grade` took a pair (its notebooks, the judge,
    registering the units, the merges), `cores` pairs at once: hours on an otherwise idle machine of `cores`."""
    sample = result["sample"]
    if not sample:
        return None
    cpu = result["cpu_seconds"]["grading: real sample"] / len(sample)
    return {
        "real_pairs": len(sample),
        "mean_job_wall_seconds_here": round(sum(s["job_seconds"] for s in sample) / len(sample), 1),
        "cpu_seconds_a_pair": round(cpu, 1),
        "pairs": pairs,
        "cores": cores,
        "hours": round(pairs * cpu / cores / 3600, 2),
    }


def figure(result: dict, path: Path) -> None:
    use_fonts()
    names = {
        "import": text("导入（Canvas 下载 + 提交时间）", "import (Canvas download + times)"),
        "hand-grading sheets": text("导出两名评分人的表", "two graders' sheets"),
        "sheets imported": text("导入两张表", "the two sheets imported"),
        "feedback": text("重新生成反馈", "feedback made again"),
        "export": text("导出到 Canvas", "export for Canvas"),
    }
    load = result["load_average_before_and_after"][0]
    rows = {
        text("墙钟", "wall clock") + f"\n(load {load})": result["seconds"],
        text("CPU 时间", "CPU time"): result["cpu_seconds"],
    }
    fig, ax = plt.subplots(figsize=(10, 4.5))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for y, seconds in enumerate(rows.values()):
        left = 0.0
        for step, colour in zip(TIMED, colours, strict=False):
            label = f"{names[step]}: {result['seconds'][step]:.1f} s" if y == 0 else None
            ax.barh([y], [seconds[step]], left=left, color=colour, label=label)
            left += seconds[step]
        ax.text(left, y, f" {left:.0f} s", va="center")
    ax.axvline(TARGET_SECONDS, color="k", ls="--", label=text("目标：2 分钟", "target: 2 minutes"))
    ax.set_yticks(range(len(rows)), list(rows))
    ax.set_xlabel(text("秒（评分本身除外）", "seconds (grading itself left out)"))
    ax.set_title(
        text(
            f"{result['students']} 名学生、2 个单元的一周，{result['cpus']} 核",
            f"a week of {result['students']} students, 2 units, {result['cpus']} cores",
        )
    )
    most = max(sum(seconds[step] for step in TIMED) for seconds in rows.values())
    ax.set_xlim(0, max(TARGET_SECONDS, most) * 1.15)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=2, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def commit() -> str:
    found = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return found.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--real", type=int, default=1, help="students whose two units are graded for real")
    parser.add_argument("--jobs", type=int, default=resources.cpu_count())
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/local/week"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    log = (args.out / "grading_week.log").resolve()
    log.unlink(missing_ok=True)
    worker.alembic_head()  # nbgrader's modules imported before the clock starts
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="grading-week-") as tmp:
        found = week(Path(tmp), args.students, args.real, args.jobs, log)
    total = sum(found["seconds"][step] for step in TIMED)
    cpu = sum(found["cpu_seconds"][step] for step in TIMED)
    result = {
        "students": args.students,
        "units": list(UNITS),
        "cpus": resources.cpu_count(),
        "load_average_before_and_after": [round(x, 1) for x in (*load_before, *os.getloadavg())],
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "commit": commit(),
        "command": f"python -m benchmarks.grading_week --students {args.students} --real {args.real}",
        **found,
        "timed_total_seconds": round(total, 1),
        "timed_total_cpu_seconds": round(cpu, 1),
        "target_seconds": TARGET_SECONDS,
        "target_met": total <= TARGET_SECONDS,
        "grading_estimate_for_the_class": estimate(found, args.students * len(UNITS), resources.cpu_count()),
    }
    (args.out / "grading_week.json").write_text(json.dumps(result, indent=1, ensure_ascii=False))
    figure(result, args.out / "grading_week.png")
    shown = ("seconds", "cpu_seconds", "timed_total_seconds", "timed_total_cpu_seconds", "target_met")
    print(json.dumps({k: result[k] for k in shown}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
