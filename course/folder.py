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
