"""The grading secret: out of the students' reach, never empty, and the seeds keyed by it."""

from __future__ import annotations

import hashlib
import stat

import pytest

from course import ROOT, notebooks
from course.grading import grade
from course.judge.core import seed_for
from course.judge.preprocessor import Judge
from course.layout import Course

UNIT06 = ROOT / "source" / "06_flash_attention_pytorch" / "flash_attention_pytorch.ipynb"


def test_the_judge_refuses_to_grade_without_a_secret():
    """nbgrader's own autograde sets no secret: before, every student's hidden inputs followed from their id."""
    resources = {"nbgrader": {"notebook": "flash_attention_pytorch", "student": "alice", "assignment": "06"}}
    with pytest.raises(RuntimeError, match="python -m course grade"):
        Judge(salt="").preprocess(notebooks.read(UNIT06), resources)


def test_seeds_are_keyed_so_a_known_formula_and_a_printed_seed_give_nothing_away():
    public_formula = int(hashlib.sha256(b"\0alice\0nb\0test_a").hexdigest()[:12], 16)  # the old, unkeyed seed
    assert seed_for("", "alice", "nb", "test_a") != public_formula
    final, preview = "k" * 32, grade.feedback_salt("k" * 32)
    assert preview != final and final not in preview
    assert seed_for(final, "alice", "nb", "test_a") != seed_for(preview, "alice", "nb", "test_a")


def test_the_course_secret_is_made_once_and_readable_by_the_grader_alone(tmp_path, monkeypatch):
    monkeypatch.delenv("FLASH_COURSE_OVERLAY", raising=False)
    course = Course(tmp_path / "course", ROOT / "course" / "wrong")
    course.root.mkdir()
    secret = grade.grading_salt(course)
    path = course.root / ".grading_salt"
    assert len(secret) >= 32 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert grade.grading_salt(course) == secret
