"""`python -m course release`: committed releases are fresh, stubs are bilingual, leaks are caught."""

import json
import shutil

import pytest
from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT

from course import notebooks, release
from course.layout import COURSE, Course


@pytest.mark.parametrize("course", [COURSE, FIXTURE_COURSE], ids=["course", "fixture"])
def test_committed_release_is_byte_identical_to_a_fresh_generation(course):
    assert release.stale(course) == [], "release/ is stale: run `python -m course release`"


def test_fixture_release_has_bilingual_stubs_and_keeps_visible_tests():
    nb = notebooks.read(FIXTURE / "release" / UNIT / "softmax.ipynb")
    stub = notebooks.solution_cells(nb)["softmax_impl"].source
    assert "# YOUR CODE HERE / 在此作答" in stub and "raise NotImplementedError()" in stub
    assert "def stable_softmax(xs):" in stub  # the skeleton outside the solution region stays
    assert "stable_softmax([1000.0, 1000.0])" in notebooks.test_cells(nb)["test_large_inputs"].source


def plant_solution_line(target):
    path = target / "softmax.ipynb"
    nb = notebooks.read(path)
    nb.cells[-1].source += "\nweights = [math.exp(x - top) for x in xs]"
    notebooks.write(nb, path)


def plant_hidden_marker(target):
    path = target / "logsumexp.ipynb"
    path.write_text(
        path.read_text(encoding="utf-8").replace("raise NotImplementedError()", "### END HIDDEN TESTS")
    )


def plant_output(target):
    path = target / "logsumexp.ipynb"
    data = json.loads(path.read_text(encoding="utf-8"))
    code = next(c for c in data["cells"] if c["cell_type"] == "code")
    code["outputs"] = [{"name": "stdout", "output_type": "stream", "text": ["0.69\n"]}]
    path.write_text(json.dumps(data), encoding="utf-8")


def plant_wrong_impl(target):
    shutil.copy(FIXTURE / "wrong" / UNIT / "lse_max_only.py", target / "helper.py")


def plant_instructor_folder(target):
    (target / "instructor").mkdir()
    (target / "instructor" / "notes.md").write_text("grading notes\n")


@pytest.mark.parametrize(
    "plant, expected",
    [
        (plant_solution_line, "leaks solution / hidden test: weights = [math.exp(x - top) for x in xs]"),
        (plant_hidden_marker, "contains the marker END HIDDEN TESTS"),
        (plant_output, "has outputs"),
        (plant_wrong_impl, "same content as an instructor file"),
        (plant_instructor_folder, "instructor-only file"),
    ],
)
def test_leak_check_catches_a_planted_leak(tmp_path, plant, expected):
    target = tmp_path / UNIT
    shutil.copytree(FIXTURE / "release" / UNIT, target)
    instructor = release.instructor_files(FIXTURE_COURSE)
    assert release.find_leaks(FIXTURE / "source" / UNIT, target, instructor) == []
    plant(target)
    leaks = release.find_leaks(FIXTURE / "source" / UNIT, target, instructor)
    assert any(expected in leak for leak in leaks), leaks


def test_release_refuses_a_source_that_would_leak_and_keeps_no_partial_output(tmp_path):
    course = Course(tmp_path / "course", FIXTURE_COURSE.wrong)
    shutil.copytree(FIXTURE / "source", course.source)
    shutil.copy(FIXTURE / "wrong" / UNIT / "softmax_no_max.py", course.source / UNIT / "answers_draft.py")
    with pytest.raises(release.ReleaseError, match="answers_draft.py: same content as an instructor file"):
        release.build(course, [UNIT], course.release)
    assert not (course.release / UNIT).exists()


def test_release_names_the_cell_with_solution_markers_but_no_metadata(tmp_path):
    unit = tmp_path / UNIT
    shutil.copytree(FIXTURE / "source" / UNIT, unit)
    nb = notebooks.read(unit / "logsumexp.ipynb")
    nb.cells[1].source = "### BEGIN SOLUTION\nx = 1\n### END SOLUTION"
    nb.cells[4].metadata = {}
    notebooks.write(nb, unit / "logsumexp.ipynb")
    with pytest.raises(release.ReleaseError) as error:
        release.check_metadata(unit)
    message = str(error.value)
    assert "logsumexp.ipynb cell 1 has BEGIN SOLUTION but no nbgrader solution-cell metadata" in message
    assert "logsumexp.ipynb cell 4 has BEGIN HIDDEN TESTS but is not a graded (test) cell" in message
    assert "第 1 个单元格" in message  # bilingual: the Chinese half is there too


def test_unknown_unit_is_a_clear_error():
    with pytest.raises(ValueError, match=r"unknown unit\(s\) \['99_nope'\]"):
        FIXTURE_COURSE.select(["99_nope"])


def test_units_can_be_named_by_number():
    assert FIXTURE_COURSE.select(["01"]) == ["01_softmax"]
    assert FIXTURE_COURSE.select(["01_softmax"]) == ["01_softmax"]
    assert FIXTURE_COURSE.select(None) == ["01_softmax"]
    with pytest.raises(ValueError, match="unknown unit"):
        FIXTURE_COURSE.select(["02"])
