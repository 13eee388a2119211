"""`python -m course demo`: release every unit, grade the bundled sample class, show the grades and feedback.

Everything is written under `course_output/demo/` (its own nbgrader course root), never into a real class.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

from course import notebooks, release, wrong
from course.grading import grade, submissions
from course.judge import sandbox
from course.layout import COURSE, SAMPLE_CLASS, Course
from utils.messages import bilingual

OUTPUT = COURSE.checkout / "course_output" / "demo"  # never the course folder of a real class


def crash_unit(course: Course, units: list[str]) -> str:
    """Where the crashing student crashes: the last unit whose last notebook has more than two exercises (its
    first is replaced by the crash; the judge still has independent ones to grade), else the last unit."""
    for unit in reversed(units):
        last = notebooks.read(course.source / unit / course.notebooks(unit)[-1])
        if len(notebooks.solution_cells(last)) > 2:
            return unit
    return units[-1]


def overrides(course: Course, unit: str, student: dict, crash_here: bool) -> dict[str, str]:
    """{grade_id: source} that differ from the reference answers for this student and unit."""
    changed: dict[str, str] = {}
    wrongs = wrong.load(course.wrong / unit)
    exercises = [
        gid
        for nb in course.notebooks(unit)
        for gid in notebooks.solution_cells(notebooks.read(course.source / unit / nb))
        if any(w.replaces == gid for w in wrongs)
    ]
    for gid in exercises[: student.get("mistakes", 0)]:
        changed[gid] = next(w.body for w in wrongs if w.replaces == gid)
    if "crash" in student and crash_here:
        last = notebooks.read(course.source / unit / course.notebooks(unit)[-1])
        changed[next(iter(notebooks.solution_cells(last)))] = (SAMPLE_CLASS / student["crash"]).read_text(
            "utf-8"
        )
    return changed


def build_class(course: Course, release_root: Path, spec: Path, dest: Path, units: list[str]) -> list[str]:
    """Write the sample class's submissions `dest/<student>/<unit>/*.ipynb` of `units`; return the student ids."""
    students = tomllib.loads(spec.read_text(encoding="utf-8"))["student"]
    crashes_in = crash_unit(course, units)
    for student in students:
        for unit in units:
            changed = overrides(course, unit, student, unit == crashes_in)
            submissions.write_student(
                release_root / unit, course.source / unit, dest / student["id"] / unit, changed
            )
    return [student["id"] for student in students]


def run(
    course: Course = COURSE,
    out: Path = OUTPUT,
    timeout: float | None = None,
    jobs: int | None = None,
    units: list[str] | None = None,
) -> list[grade.Row]:
    """The demo on `course` (every unit, or `units`; the crashing student crashes in `crash_unit`), written
    under `out` (wiped first)."""
    units = units or course.units()
    if not units:
        raise ValueError(bilingual("source/ 中还没有单元", "no units in source/ yet"))
    shutil.rmtree(out, ignore_errors=True)
    demo = Course(out, course.wrong)
    shutil.copytree(course.source, demo.source)
    print(bilingual("1/3 生成发布版本并检查泄露……", "1/3 generating the release and checking for leaks…"))
    release.build(course, units, demo.release)
    print(
        bilingual(
            "2/3 按 course/sample_class 生成示例班级的提交……", "2/3 building the sample class's submissions…"
        )
    )
    students = build_class(course, demo.release, SAMPLE_CLASS / "class.toml", out / "submissions", units)
    print(bilingual(f"3/3 评分：{', '.join(students)}", f"3/3 grading: {', '.join(students)}"))
    return grade.grade(demo, out / "submissions", timeout, jobs, sandbox=demo_sandbox())


def demo_sandbox() -> str:
    """The best sandbox here, the weaker fallback included; the demo's own sample class may run without one (a real
    class may not)."""
    try:
        return sandbox.choose(sandbox.ALLOW_WEAKER)[0]
    except ValueError as error:
        print(error)
        print(bilingual("演示班级在没有沙箱的情况下评分", "the demo grades its own sample class unisolated"))
        return "none"


def main(timeout: float | None = None, jobs: int | None = None) -> int:
    rows = run(timeout=timeout, jobs=jobs)
    grade.print_table(rows)
    if note := grade.gpu_only_note(COURSE, rows):
        print(note)
    print(bilingual(f"成绩表：{OUTPUT / 'grades.csv'}", f"grades: {OUTPUT / 'grades.csv'}"))
    print(
        bilingual(
            f"反馈（HTML）：{OUTPUT / 'feedback'}/<学生>/<单元>/",
            f"feedback (HTML): {OUTPUT / 'feedback'}/<student>/<unit>/",
        )
    )
    return 0
