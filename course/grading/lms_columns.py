"""Which column of the LMS's gradebook each unit's grade lands in (`course export --columns/--lms-gradebook`).

An LMS matches an imported column to an assignment by its name (Canvas: `Name (id)` as its own export writes
it): a name it does not know becomes a new assignment beside the old one. So a unit's column is, in this order,
the one a mapping file gives (`--columns`, a CSV `unit,column`, a unit by number or full name), the one column of
the LMS's own exported gradebook (`--lms-gradebook`) holding the unit's full name, or else the unit's name. Given
the LMS's export, every column must be one of its columns: a unit that would create a new assignment is an error
naming it and the fix, before any file is written.
"""

from __future__ import annotations

import csv
from pathlib import Path

from course.grading import semester
from course.layout import Course

MAPPING_COLUMNS = ["unit", "column"]


def read_mapping(path: Path, course: Course) -> dict[str, str]:
    """{unit: LMS column} from a mapping CSV, every line checked."""
    if not path.is_file():
        raise semester.setting_error(
            path,
            None,
            ("文件不存在", "no such file"),
            ("检查 --columns 的路径", "check the path given to --columns"),
        )
    fix = ("每行写 单元（编号或全名）,LMS 中的列名", "write unit (number or full name),the LMS's column name")
    mapping: dict[str, str] = {}
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != MAPPING_COLUMNS:
            problem = (
                f"表头 {reader.fieldnames} 不是 unit,column",
                f"the header {reader.fieldnames} is not unit,column",
            )
            raise semester.setting_error(path, 1, problem, fix)
        for line in reader:
            column = (line["column"] or "").strip()
            try:
                (unit,) = course.select([(line["unit"] or "").strip()])
            except ValueError as error:
                raise semester.setting_error(path, reader.line_num, str(error), fix) from None
            if not column or unit in mapping or column in mapping.values():
                problem = (
                    f"{unit} 的列名为空，或单元或列出现两次",
                    f"{unit}'s column is empty, or the unit or the column appears twice",
                )
                raise semester.setting_error(path, reader.line_num, problem, fix)
            mapping[unit] = column
    return mapping


def lms_header(path: Path) -> list[str]:
    """The column names of the LMS's own exported gradebook (its first line)."""
    if not path.is_file():
        raise semester.setting_error(
            path,
            None,
            ("文件不存在", "no such file"),
            (
                "从 LMS 的成绩册导出 CSV 并给出路径",
                "export the gradebook from the LMS as CSV and give its path",
            ),
        )
    with path.open(newline="", encoding="utf-8-sig") as f:
        return [name.strip() for name in next(csv.reader(f), [])]


def unit_columns(
    course: Course, units: list[str], mapping_path: Path | None, gradebook_path: Path | None
) -> dict[str, str]:
    """{unit: the LMS column its grades go to}; refused when a column would create a new assignment."""
    mapping = read_mapping(mapping_path, course) if mapping_path else {}
    header = lms_header(gradebook_path) if gradebook_path else None
    chosen = {}
    for unit in units:
        if unit in mapping:
            chosen[unit] = mapping[unit]
        elif header is not None and len(holding := [name for name in header if unit in name]) == 1:
            chosen[unit] = holding[0]
        else:
            chosen[unit] = unit
        if header is not None and chosen[unit] not in header:
            raise semester.setting_error(
                gradebook_path,
                1,
                (
                    f"没有 {unit} 的列 {chosen[unit]!r}：导入会新建一个重复的作业",
                    f"no column {chosen[unit]!r} for {unit}: importing would create a duplicate assignment",
                ),
                (
                    f"在 --columns 文件中写一行 {unit},<LMS 中该作业的列名>",
                    f"add a line {unit},<the assignment's column in the LMS> to the --columns file",
                ),
            )
    return chosen
