"""A gradebook of unit 01 made with nbgrader's own API, as grading and formgrader would leave it (no grading run)."""

from nbgrader.api import Gradebook

from course import notebooks
from course.layout import COURSE

UNIT, NB = "01_memory_bottleneck", "memory_bottleneck"
COURSE_ID = "flash-attention-first-principles"
WRITTEN, TESTS = (
    "written_oom_accounting",
    ("test_standard_attention", "test_memory_model", "test_max_sequence_length"),
)


def unit01_gradebook(url: str, students: dict[str, float | None], autograded=(3.0, 4.0, 2.0)) -> None:
    """Unit 01 in the gradebook at `url` (nbgrader's `get_alembic_version` patched by the caller), each student's
    test cells autograded `autograded` and the written answer graded by hand with their score (None: not yet)."""
    source_nb = notebooks.read(COURSE.source / UNIT / f"{NB}.ipynb")
    with Gradebook(url, COURSE_ID) as gb:
        gb.add_assignment(UNIT)
        gb.add_notebook(NB, UNIT)
        for cell in source_nb.cells:
            meta = notebooks.meta(cell)
            if meta.get("grade"):
                gb.add_grade_cell(
                    meta["grade_id"], NB, UNIT, max_score=meta["points"], cell_type=cell.cell_type
                )
            if meta.get("solution"):
                gb.add_solution_cell(meta["grade_id"], NB, UNIT)
        for student, written in students.items():
            gb.add_student(student)
            gb.add_submission(UNIT, student)
            for name, score in zip(TESTS, autograded, strict=True):
                gb.find_grade(name, NB, UNIT, student).auto_score = score
                gb.find_grade(name, NB, UNIT, student).needs_manual_grade = False
            if written is not None:
                by_hand = gb.find_grade(WRITTEN, NB, UNIT, student)
                by_hand.manual_score, by_hand.needs_manual_grade = written, False
        gb.db.commit()
