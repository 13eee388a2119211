"""The real course, end to end on this machine: every unit's graders discriminate (`selftest`) and the demo
grades the bundled sample class (a correct, a partly wrong and a crashing student)."""

import pytest

from course import demo, selftest
from course.layout import COURSE


@pytest.fixture(scope="module")
def demo_rows(tmp_path_factory):
    rows = demo.run(COURSE, tmp_path_factory.mktemp("demo") / "course")
    return {(row.student, row.unit): row for row in rows}


def test_selftest_passes_for_every_unit():
    units = COURSE.units()
    assert units, "source/ has no units"
    cases, problems = selftest.run(COURSE, units, jobs=2)
    surprises = {
        f"{c.unit}/{c.student}": verdict
        for c in cases
        if (verdict := c.verdict(selftest.points(COURSE, c.unit, c.notebook))) is not None
    }
    assert problems == [] and surprises == {}
    assert {c.unit for c in cases} == set(units)
    assert all(sum(c.kind == "wrong" for c in cases if c.unit == u) >= 3 for u in units)


def test_demo_correct_student_gets_full_marks_in_every_unit(demo_rows):
    for unit in COURSE.units():
        alice = demo_rows[("alice_correct", unit)]
        assert alice.status == "graded" and alice.score == alice.max_score > 0, unit


def test_demo_partial_student_loses_some_points(demo_rows):
    bob = [demo_rows[("bob_partial", unit)] for unit in COURSE.units()]
    assert all(row.status == "graded" for row in bob)
    assert 0 < sum(row.score for row in bob) < sum(row.max_score for row in bob)


def test_demo_crashing_student_gets_a_status_and_the_rest_is_graded(demo_rows):
    *earlier, last = COURSE.units()
    carol = demo_rows[("carol_crash", last)]
    assert carol.status.startswith("kernel died"), carol.status
    for unit in earlier:
        row = demo_rows[("carol_crash", unit)]
        assert row.status == "graded" and row.score == row.max_score, unit
