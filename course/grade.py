"""`python -m course grade SUBMISSIONS`: autograde a class, one isolated child process per (student, unit)."""

from __future__ import annotations

import csv
import shutil
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

import utils
from course import notebooks
from course.layout import COURSE, Course
from course.runner import run_job
from utils.messages import bilingual

STATUS_ZH = {
    "graded": "已评分",
    "cell timeout": "单元格超时",
    "kernel died": "内核崩溃",
    "timeout": "超时",
    "error": "评分出错",
    "missing": "未提交",
    "unknown unit": "未知单元",
}


@dataclass
class Row:
    """The result of one student's unit."""

    student: str
    unit: str
    max_score: float
    score: float = 0.0
    problems: dict[str, str] = field(default_factory=dict)  # notebook -> status other than "graded"

    @property
    def status(self) -> str:
        if not self.problems:
            return "graded"
        return "; ".join(f"{status} ({nb})" if nb else status for nb, status in sorted(self.problems.items()))

    def status_bilingual(self) -> str:
        if not self.problems:
            return bilingual(STATUS_ZH["graded"], "graded")
        parts = [
            (STATUS_ZH[s] + (f"（{nb}）" if nb else ""), s + (f" ({nb})" if nb else ""))
            for nb, s in sorted(self.problems.items())
        ]
        return bilingual("；".join(zh for zh, _ in parts), "; ".join(en for _, en in parts))


def default_timeout() -> int:
    """Wall-clock seconds for one student's unit: the CPU interpreter is much slower than a GPU."""
    return 600 if utils.mode().is_gpu else 1800


def max_points(path: Path) -> float:
    return float(
        sum(notebooks.meta(c).get("points", 0) for c in notebooks.test_cells(notebooks.read(path)).values())
    )


def class_folder(submissions: Path, scratch: Path) -> Path:
    """The folder of `<student>/<unit>/*.ipynb`: the argument itself, or a zip unpacked into `scratch`."""
    if submissions.is_file() and zipfile.is_zipfile(submissions):
        with zipfile.ZipFile(submissions) as archive:
            archive.extractall(scratch)
        submissions = scratch
    if not submissions.is_dir():
        raise ValueError(
            bilingual(
                f"找不到提交文件夹或 zip：{submissions}", f"no submissions folder or zip at {submissions}"
            )
        )
    entries = [p for p in submissions.iterdir() if not p.name.startswith((".", "__"))]
    if len(entries) == 1 and entries[0].is_dir() and not any(entries[0].glob("*/*.ipynb")):
        return entries[0]  # a zip that wraps the class in one top folder
    return submissions


def find_pairs(folder: Path) -> list[tuple[str, str]]:
    """Every (student, unit) with at least one notebook, sorted."""
    return sorted({(nb.parent.parent.name, nb.parent.name) for nb in folder.glob("*/*/*.ipynb")})


def register_units(course: Course, units: list[str]) -> None:
    """Make sure the gradebook knows the units (nbgrader generate_assignment, release written to a temp dir)."""
    with tempfile.TemporaryDirectory(prefix="course-register-") as tmp:
        request = {"action": "generate", "root": str(course.root), "units": units, "release_dir": tmp}
        results, _ = run_job(request, 600)
    failed = [unit for unit in units if not results.get(unit, {}).get("success")]
    if failed:
        raise RuntimeError(
            bilingual(f"nbgrader 无法登记单元 {failed}", f"nbgrader could not register unit(s) {failed}")
            + "\n"
            + "\n".join(results.get(u, {}).get("log", "")[-2000:] for u in failed)
        )


def grade_pair(course: Course, student: str, unit: str, timeout: float, log: Path) -> Row:
    source = course.source / unit
    submitted = course.submitted / student / unit
    present = [nb for nb in course.notebooks(unit) if (submitted / nb).exists()]
    row = Row(student, unit, sum(max_points(source / nb) for nb in course.notebooks(unit)))
    row.problems.update({nb: "missing" for nb in course.notebooks(unit) if nb not in present})
    request = {
        "action": "autograde",
        "root": str(course.root),
        "unit": unit,
        "student": student,
        "notebooks": present,
        "feedback": True,
    }
    results, timed_out = run_job(request, timeout, log)
    for nb in present:
        entry = results.get(student, {}).get(nb)
        if entry is None:
            row.problems[nb] = "timeout" if timed_out else "error"
            continue
        row.score += sum(score for score, _ in entry["scores"].values())
        if entry["status"] != "graded":
            row.problems[nb] = entry["status"]
    return row


def write_csv(rows: list[Row], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student_id", "unit", "score", "max_score", "status"])
        for row in rows:
            writer.writerow([row.student, row.unit, f"{row.score:g}", f"{row.max_score:g}", row.status])


def print_table(rows: list[Row]) -> None:
    header = ("学生 Student", "单元 Unit", "得分 Score", "状态 Status")
    lines = [(r.student, r.unit, f"{r.score:g} / {r.max_score:g}", r.status_bilingual()) for r in rows]
    widths = [max(len(x) for x in column) for column in zip(header, *lines, strict=False)]
    for line in [header, *lines]:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False)).rstrip())


def grade(course: Course, submissions: Path, timeout: float | None = None) -> list[Row]:
    """Copy the class into submitted/, autograde every (student, unit), write grades.csv and feedback."""
    timeout = timeout or default_timeout()
    with tempfile.TemporaryDirectory(prefix="course-class-") as tmp:
        folder = class_folder(submissions.resolve(), Path(tmp))
        pairs = find_pairs(folder)
        if not pairs:
            raise ValueError(
                bilingual(
                    f"{submissions} 中没有 <学生>/<单元>/*.ipynb",
                    f"no <student>/<unit>/*.ipynb in {submissions}",
                )
            )
        known = set(course.units())
        for student, unit in pairs:
            if unit in known:
                shutil.rmtree(course.submitted / student / unit, ignore_errors=True)
                shutil.copytree(folder / student / unit, course.submitted / student / unit)
    units = sorted({unit for _, unit in pairs if unit in known})
    if units:
        print(bilingual("正在登记单元到 gradebook……", "registering units in the gradebook…"))
        register_units(course, units)
    log = course.autograded / "grading.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("", encoding="utf-8")
    rows = []
    for student, unit in tqdm(pairs, desc=bilingual("评分", "grading"), unit="unit"):
        if unit in known:
            rows.append(grade_pair(course, student, unit, timeout, log))
        else:
            rows.append(Row(student, unit, 0.0, problems={"": "unknown unit"}))
    write_csv(rows, course.root / "grades.csv")
    return rows


def main(submissions: str, timeout: float | None = None, course: Course = COURSE) -> int:
    rows = grade(course, Path(submissions), timeout)
    print_table(rows)
    print(bilingual(f"成绩表：{course.root / 'grades.csv'}", f"grades: {course.root / 'grades.csv'}"))
    print(
        bilingual(
            f"反馈（HTML）：{course.feedback}/<学生>/<单元>/",
            f"feedback (HTML): {course.feedback}/<student>/<unit>/",
        )
    )
    print(
        bilingual(
            f"评分日志：{course.autograded / 'grading.log'}",
            f"grading log: {course.autograded / 'grading.log'}",
        )
    )
    return 0
