"""Where a semester's state lives: the course folder (`course.layout`). Nothing heavy is imported here:
nbgrader_config.py reads it in every nbgrader run."""

from __future__ import annotations

import os
from pathlib import Path

ENV = "FLASH_COURSE_DIR"
DEFAULT_FOLDER = "flash-attention-semester"  # in the home folder


def course_folder(chosen: str | os.PathLike | None = None) -> Path:
    """The course folder: `chosen` (`--course-dir`), else `FLASH_COURSE_DIR`, else `~/flash-attention-semester`."""
    where = chosen or os.environ.get(ENV) or Path.home() / DEFAULT_FOLDER
    return Path(where).expanduser().resolve()


def missing_message(folder: Path) -> str:
    """Why a course folder named (`--course-dir`, FLASH_COURSE_DIR) but missing is refused, and how to start one: a
    typo would silently start a new semester (a new salt, no roster, no semester.toml). In both languages, in
    `utils.messages.bilingual`'s form (utils is not imported here)."""
    command = f"python -m course --course-dir {folder} init"
    return (
        f"课程文件夹 {folder} 不存在（--course-dir 或 {ENV} 拼错了？）。开始新学期请先运行 `{command}` / "
        f"the course folder {folder} does not exist (a typo in --course-dir or {ENV}?). To start a new semester "
        f"there, run `{command}` first"
    )
