"""`python -m course release [UNIT…]`: generate `release/` from `source/` with nbgrader, byte-stable and leak-free."""

from __future__ import annotations

import filecmp
import fnmatch
import shutil
import tempfile
from pathlib import Path

from course import notebooks
from course.grading import rubric
from course.grading.runner import run_job
from course.layout import COURSE, SAMPLE_CLASS, Course
from utils.messages import bilingual

GENERATE_TIMEOUT = 600
INSTRUCTOR_ONLY = ("instructor", "*.solution.*", "*_solution.*", "*_answers.*", "gradebook.db")


class ReleaseError(ValueError):
    """The source cannot be released as it is, or the release would leak answers."""


def check_metadata(unit_dir: Path) -> None:
    """Every cell with solution or hidden-test markers must be a solution / graded cell (nbgrader metadata), and
    every hand-graded cell's rubric can be read (`course.grading.rubric`)."""
    problems = []
    try:
        rubric.unit_rubrics(unit_dir)
    except rubric.RubricError as error:
        problems.append(str(error))
    for path in sorted(unit_dir.glob("*.ipynb")):
        for index, cell in enumerate(notebooks.read(path).cells):
            meta = notebooks.meta(cell)
            if notebooks.SOLUTION[0] in cell.source and not meta.get("solution"):
                problems.append(
                    bilingual(
                        f"{path.name} 第 {index} 个单元格含 BEGIN SOLUTION 但没有 nbgrader 解答单元格元数据",
                        f"{path.name} cell {index} has BEGIN SOLUTION but no nbgrader solution-cell metadata",
                    )
                )
            if notebooks.HIDDEN[0] in cell.source and not meta.get("grade"):
                problems.append(
                    bilingual(
                        f"{path.name} 第 {index} 个单元格含 BEGIN HIDDEN TESTS 但不是评分单元格",
                        f"{path.name} cell {index} has BEGIN HIDDEN TESTS but is not a graded (test) cell",
                    )
                )
    if problems:
        raise ReleaseError("\n".join(problems))


def secret_lines(source_nb) -> set[str]:
    """Stripped lines that occur only inside solution or hidden-test regions of a source notebook."""
    secret, public = set(), set()
    for cell in source_nb.cells:
        inside, outside = notebooks.partition(cell.source)
        secret.update(line.strip() for line in inside)
        public.update(line.strip() for line in outside)
    return {line for line in secret - public if len(line) > 3}


def find_leaks(source_dir: Path, release_dir: Path, instructor_files: list[Path]) -> list[str]:
    """Every way `release_dir` gives away what only `source_dir` or the instructor should have."""
    leaks = []
    instructor = [p for p in instructor_files if p.is_file()]
    for path in sorted(p for p in release_dir.rglob("*") if p.is_file()):
        name = path.relative_to(release_dir)
        if any(fnmatch.fnmatch(part, pattern) for part in name.parts for pattern in INSTRUCTOR_ONLY):
            leaks.append(bilingual(f"{name}：仅限教师的文件", f"{name}: instructor-only file"))
        if any(filecmp.cmp(path, other, shallow=False) for other in instructor):
            leaks.append(
                bilingual(f"{name}：与教师文件内容相同", f"{name}: same content as an instructor file")
            )
        if path.suffix != ".ipynb":
            continue
        text = path.read_text(encoding="utf-8")
        for marker in notebooks.MARKERS:
            if marker in text:
                leaks.append(bilingual(f"{name}：含有标记 {marker}", f"{name}: contains the marker {marker}"))
        source = source_dir / name
        if not source.exists():
            continue
        released = "\n".join(cell.source for cell in notebooks.read(path).cells)
        released_lines = {line.strip() for line in released.splitlines()}
        for line in sorted(secret_lines(notebooks.read(source)) & released_lines):
            leaks.append(
                bilingual(
                    f"{name}：泄露了答案或隐藏测试：{line}", f"{name}: leaks solution / hidden test: {line}"
                )
            )
        if any(c.get("outputs") for c in notebooks.read(path).cells):
            leaks.append(bilingual(f"{name}：含有输出", f"{name}: has outputs"))
    return leaks


def instructor_files(course: Course) -> list[Path]:
    folders = (course.wrong, course.variants, course.redteam, SAMPLE_CLASS)
    return [p for folder in folders if folder.is_dir() for p in folder.rglob("*")]


def build(course: Course, units: list[str], out: Path) -> None:
    """Write the release of `units` into `out/<unit>/`, replacing what was there; raise ReleaseError on a leak."""
    for unit in units:
        check_metadata(course.source / unit)
    with tempfile.TemporaryDirectory(prefix="course-release-") as tmp:
        scratch = Path(tmp)
        for unit in units:
            shutil.copytree(course.source / unit, scratch / "source" / unit)
        request = {
            "action": "generate",
            "root": str(scratch),
            "units": units,
            "release_dir": str(scratch / "out"),
        }
        results, timed_out = run_job(request, GENERATE_TIMEOUT)
        for unit in units:
            result = results.get(unit, {"success": False, "log": "timeout" if timed_out else ""})
            if not result["success"]:
                raise ReleaseError(
                    bilingual(f"nbgrader 无法生成 {unit}", f"nbgrader could not generate {unit}")
                    + "\n"
                    + result["log"][-3000:]
                )
            generated, target = scratch / "out" / unit, out / unit
            shutil.rmtree(target, ignore_errors=True)
            for path in sorted(p for p in generated.rglob("*") if p.is_file()):
                dest = target / path.relative_to(generated)
                dest.parent.mkdir(parents=True, exist_ok=True)
                if path.suffix == ".ipynb":
                    notebooks.write(notebooks.read(path), dest)
                else:
                    shutil.copyfile(path, dest)
            leaks = find_leaks(course.source / unit, target, instructor_files(course))
            if leaks:
                shutil.rmtree(target)
                raise ReleaseError("\n".join(leaks))


def stale(course: Course) -> list[str]:
    """Differences between the committed release/ and a fresh generation (empty when in sync)."""
    units = course.units()
    with tempfile.TemporaryDirectory(prefix="course-fresh-") as tmp:
        fresh = Path(tmp)
        if units:
            build(course, units, fresh)
        expected = {p.relative_to(fresh): p.read_bytes() for p in fresh.rglob("*") if p.is_file()}
    release = course.release
    actual = {p.relative_to(release): p.read_bytes() for p in release.rglob("*") if p.is_file()}
    actual = {name: data for name, data in actual.items() if len(name.parts) > 1}  # unit files, not README
    return sorted(str(name) for name in set(expected) | set(actual) if expected.get(name) != actual.get(name))


def main(names: list[str] | None, check: bool = False, course: Course = COURSE) -> int:
    if check:
        differences = stale(course)
        for name in differences:
            print(bilingual(f"release/ 与 source/ 不一致：{name}", f"release/ is out of date: {name}"))
        if differences:
            print(bilingual("请运行 python -m course release", "run python -m course release"))
        return 1 if differences else 0
    units = course.select(names)
    if not units:
        print(bilingual("source/ 中还没有单元", "no units in source/ yet"))
        return 0
    print(
        bilingual(
            f"正在生成 {len(units)} 个单元的发布版本……", f"generating the release of {len(units)} unit(s)…"
        )
    )
    build(course, units, course.release)
    if not names:
        for extra in sorted(p for p in course.release.iterdir() if p.is_dir() and p.name not in units):
            shutil.rmtree(extra)
            print(bilingual(f"已删除过期的 release/{extra.name}", f"removed stale release/{extra.name}"))
    for unit in units:
        print("  ✓ " + bilingual(f"release/{unit}（无泄露）", f"release/{unit} (no leaks)"))
    return 0
