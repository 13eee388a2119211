"""The tiny fixture course used by the pipeline tests (one unit, two notebooks, pure Python)."""

import shutil
from pathlib import Path

from course import demo, release
from course.layout import SAMPLE_CLASS, Course

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "mini_course"
FIXTURE_COURSE = Course(FIXTURE, FIXTURE / "wrong")
UNIT = "01_softmax"


def course_copy(root: Path) -> Course:
    """A scratch course at `root` with the fixture's source."""
    course = Course(root, FIXTURE_COURSE.wrong)
    shutil.copytree(FIXTURE / "source", course.source)
    return course


def sample_class_with_blank(tmp: Path) -> Path:
    """The sample class's submissions of UNIT under `tmp/class`, plus dan_blank, who handed in the blank release
    of one notebook and skipped the other."""
    release.build(FIXTURE_COURSE, [UNIT], tmp / "release")
    class_folder = tmp / "class"
    demo.build_class(FIXTURE_COURSE, tmp / "release", SAMPLE_CLASS / "class.toml", class_folder, [UNIT])
    (class_folder / "dan_blank" / UNIT).mkdir(parents=True)
    shutil.copy(tmp / "release" / UNIT / "logsumexp.ipynb", class_folder / "dan_blank" / UNIT)
    return class_folder
