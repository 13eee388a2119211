"""The tiny fixture course used by the pipeline tests (one unit, two notebooks, pure Python)."""

from pathlib import Path

from course.layout import Course

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "mini_course"
FIXTURE_COURSE = Course(FIXTURE, FIXTURE / "wrong")
UNIT = "01_softmax"
