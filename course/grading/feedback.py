"""`python -m course feedback [UNIT…]`: make again the feedback pages whose inputs changed, and no others.

nbgrader's own `generate_feedback` skips every student who has a page already (unless `--force`), so a hand grade,
an imported sheet or an extension granted after grading never reached the students. This command first computes
grades.csv's late columns again from semester.toml (as `course export` does), then compares each graded pair's
feedback inputs (`course.grading.feedback_inputs`) with those its page was made from, and makes exactly the pages
that differ (or have none), in nbgrader jobs that share each unit's pages, `--jobs` at once (a page takes about
a quarter of a second of a core, its job compiling the templates and highlighting each distinct code cell once: a
class of 300 is over a minute in one job). `--force` makes every page again.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from course.grading import feedback_inputs, gradebook_db, resources, semester
from course.grading.lock import grading_lock
from course.grading.runner import run_job
from course.layout import Course
from utils.messages import bilingual

SECONDS_PER_PAGE = 30
PAGES_PER_JOB = 10  # at least: a job's start (its imports, seconds) stays small beside its pages


def stale(course: Course, units: list[str], force: bool = False) -> dict[tuple[str, str], str]:
    """{pair: its digest now} of the pages to make again."""
    pairs = feedback_inputs.made_pairs(course, units)
    now, made = feedback_inputs.digests(course, pairs), feedback_inputs.recorded(course)
    return {
        pair: digest
        for pair, digest in now.items()
        if force
        or made.get(feedback_inputs.key(pair)) != digest
        or not (course.feedback / pair[0] / pair[1]).is_dir()
    }


def shares(todo: dict[tuple[str, str], str], jobs: int) -> list[tuple[str, list[str]]]:
    """The jobs that make the pages `todo`: (unit, students), each unit's students split among up to `jobs` jobs of
    at least PAGES_PER_JOB pages."""
    found = []
    for unit in sorted({unit for _, unit in todo}):
        students = sorted(student for student, u in todo if u == unit)
        parts = max(1, min(jobs, len(students) // PAGES_PER_JOB))
        found += [(unit, students[i::parts]) for i in range(parts)]
    return found


def refresh(
    course: Course, units: list[str], force: bool = False, jobs: int | None = None
) -> tuple[list, list]:
    """(pairs whose page was made again, pairs whose page nbgrader could not make); `jobs` nbgrader jobs at once
    (default: one per core)."""
    gradebook_db.settle(course)
    with grading_lock(course, "course feedback"):
        semester.refresh_late_columns(course)
        todo = stale(course, units, force)
        jobs = jobs or resources.cpu_count()

        def make(unit: str, students: list[str]) -> dict:
            request = {
                "action": "feedback",
                "root": str(course.root),
                "source": str(course.source),
                "db_url": gradebook_db.url(course),
                "unit": unit,
                "students": students,
            }
            timeout = 60 + SECONDS_PER_PAGE * len(students)
            return run_job(request, timeout, course.autograded / "feedback.log")[0]

        made, failed = {}, []
        with ThreadPoolExecutor(jobs) as pool:
            work = shares(todo, jobs)
            for (unit, students), results in zip(
                work, pool.map(lambda share: make(*share), work), strict=True
            ):
                for student in students:
                    if results.get(student):
                        made[student, unit] = todo[student, unit]
                    else:
                        failed.append((student, unit))
                feedback_inputs.record(course, made)
    return sorted(made), sorted(failed)


def main(course: Course, names: list[str], force: bool = False, jobs: int | None = None) -> int:
    units = course.select(names)
    made, failed = refresh(course, units, force, jobs)
    for student, unit in made:
        print(bilingual(f"已重新生成：{student}/{unit}", f"made again: {student}/{unit}"))
    print(
        bilingual(
            f"重新生成 {len(made)} 份反馈，其余的输入没有改变：{course.feedback}/<学生>/<单元>/",
            f"{len(made)} feedback pages made again, the others' inputs unchanged: {course.feedback}/<student>/<unit>/",
        )
    )
    for student, unit in failed:
        print(
            bilingual(
                f"无法生成 {student}/{unit} 的反馈：见 {course.autograded / 'feedback.log'}",
                f"could not make {student}/{unit}'s feedback: see {course.autograded / 'feedback.log'}",
            )
        )
    return 1 if failed else 0
