"""The real course, end to end on this machine: every unit's graders discriminate (`selftest`) and the demo
grades the bundled sample class (a correct, a partly wrong and a crashing student).

GPU-only test cells (course/AUTHORING.md) earn nothing without a GPU, so the expected scores subtract their
points when there is none; the amount comes from the notebooks' metadata."""

import itertools
import shutil

import pytest

from course import demo, notebooks, selftest, wrong
from course.grading import grade
from course.judge import units as judged
from course.layout import COURSE, Course

# CI's time: the demo grades the first unit (PyTorch) and the lighter Triton unit, where the crashing student
# crashes; `test_the_whole_demo_on_the_gpu_host` grades and regrades every unit (each unit's solution is also
# graded by the selftest).
DEMO_UNITS = [COURSE.units()[0], "07_triton_basics"]


@pytest.fixture(scope="module")
def demo_course(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "course"
    rows = demo.run(COURSE, out, units=DEMO_UNITS)
    return out, {(row.student, row.unit): row for row in rows}


@pytest.fixture(scope="module")
def demo_rows(demo_course):
    return demo_course[1]


@pytest.fixture(scope="module")
def selftest_run():
    """CI's quick set (wrong implementations covering every test cell, one variant per exercise, one attack of
    each kind); `test_the_full_selftest_on_the_gpu_host` grades every case. Two slots: three took 1087 s of a
    fresh clone's CI run on 2 cores, against 928 s with two."""
    units = COURSE.units()
    assert units, "source/ has no units"
    return units, *selftest.run(COURSE, units, jobs=2, red_team=True, sample=True)


def surprises_of(cases) -> dict[str, str]:
    surprises = {}
    for c in cases:
        verdict = c.verdict(
            selftest.points(COURSE, c.unit, c.notebook), selftest.skipped(COURSE, c.unit, c.notebook)
        )
        if verdict is not None:
            surprises[f"{c.unit}/{c.student}"] = verdict
    return surprises


def gpu_only(unit: str, nb: str) -> dict[str, float]:
    return notebooks.gpu_only_tests(notebooks.read(COURSE.source / unit / nb))


def unearnable_here(unit: str) -> float:
    """Points of the unit's GPU-only test cells when there is no GPU (they score 0 here), else 0."""
    return sum(
        selftest.points(COURSE, unit, nb)[gid]
        for nb in COURSE.notebooks(unit)
        for gid in selftest.skipped(COURSE, unit, nb)
    )


def test_selftest_passes_for_every_unit(selftest_run):
    units, cases, problems = selftest_run
    assert problems == [] and surprises_of(cases) == {}
    assert {c.unit for c in cases} == set(units)
    for unit in units:  # every test cell that a wrong implementation targets is failed by one of the sample
        must_fail = {g for w in wrong.load(COURSE.wrong / unit) for g in w.must_fail}
        sampled = {g for c in cases if c.unit == unit and c.kind == "wrong" for g in c.must_fail}
        assert must_fail and sampled == must_fail, unit
    assert {c.kind for c in cases} >= {"variant", "redteam"}  # no false accusations; no gain from attacks
    every_kind = {a.attack_class for unit in units for a in wrong.load(COURSE.redteam / unit, "redteam")}
    assert {c.attack.attack_class for c in cases if c.kind == "redteam"} == every_kind  # each kind of attack


@pytest.mark.gpu
def test_the_full_selftest_on_the_gpu_host():
    """Every wrong implementation, legitimate variant and attack of every unit, graded on the GPU."""
    cases, problems = selftest.run(COURSE, COURSE.units(), jobs=8, red_team=True)
    assert problems == [] and surprises_of(cases) == {}


def test_selftest_slow_but_correct_implementations_keep_every_other_point(selftest_run):
    """A wrong implementation that must fail only GPU-only cells (a correct but slow kernel) is correct."""
    _, cases, _ = selftest_run
    slow = [c for c in cases if c.kind == "wrong" and set(c.must_fail) <= set(gpu_only(c.unit, c.notebook))]
    assert slow
    for case in slow:
        tests = selftest.points(COURSE, case.unit, case.notebook)
        kept = {g: pts for g, pts in tests.items() if g not in gpu_only(case.unit, case.notebook)}
        lost = [g for g, pts in kept.items() if case.result.get("scores", {}).get(g, [0.0])[0] < pts]
        assert case.result.get("status") == "graded" and lost == [], f"{case.student}: {case.result}"


def graded_by_hand(unit: str) -> float:
    """Points of the unit's cells a person grades (in its maximum, not in a fresh grading's score)."""
    return sum(sum(notebooks.all_points(notebooks.read(COURSE.source / unit / nb), hand_only=True).values())
               for nb in COURSE.notebooks(unit))  # fmt: skip


def check_demo(rows: dict, units: list[str]) -> None:
    """Alice earns every point this machine can award (not those a person grades), Bob loses some, Carol's crash
    unit records the dead kernel (the judge still grades it) and her other units are complete."""
    assert {unit for _, unit in rows} == set(units)
    for unit in units:
        alice = rows[("alice_correct", unit)]
        assert alice.status == "graded" and alice.max_score > unearnable_here(unit), unit
        assert alice.score == alice.max_score - unearnable_here(unit) - graded_by_hand(unit), unit
    bob = [rows[("bob_partial", unit)] for unit in units]
    assert all(row.status == "graded" for row in bob)
    assert 0 < sum(row.score for row in bob) < sum(row.max_score for row in bob)
    crashed = demo.crash_unit(COURSE, units)
    carol = rows[("carol_crash", crashed)]
    assert carol.status.startswith("kernel died"), carol.status
    assert (
        0 < carol.score < carol.max_score
    )  # the crash costs the crashed exercise, the judge grades the rest
    for unit in (u for u in units if u != crashed):
        row = rows[("carol_crash", unit)]
        expected = row.max_score - unearnable_here(unit) - graded_by_hand(unit)
        assert row.status == "graded" and row.score == expected, unit


def test_demo_grades_the_sample_class(demo_rows):
    check_demo(demo_rows, DEMO_UNITS)


def test_each_row_says_where_its_grading_time_went(demo_rows):
    """Per notebook: nbgrader's autograde, the judge inside it, the judge's cases of each cell, the notebook's own
    run of each cell's visible self-check, and the stages (course.judge.kernel, course.judge.preprocessor): the
    judge runs beside the notebook, both inside the autograde, inside the pair's job."""
    for (_, unit), row in demo_rows.items():
        assert row.seconds["merge"] >= 0
        for nb in COURSE.notebooks(unit):
            n_cells = len(selftest.points(COURSE, unit, nb))
            mine = {key: s for key, s in row.seconds.items() if key.startswith(f"{nb}/")}
            judged = [s for key, s in mine.items() if key.count("/") == 1 and key != f"{nb}/judge"]
            selfchecks = [s for key, s in mine.items() if key.endswith("/self-check")]
            stage = {key.removeprefix(f"{nb}/stage/"): s for key, s in mine.items() if "/stage/" in key}
            assert len(judged) == n_cells, (unit, row.seconds)
            if row.status == "graded":  # a crashed kernel leaves the cells after the crash unrun
                assert len(selfchecks) == n_cells, (unit, row.seconds)
            assert sum(judged) <= row.seconds[f"{nb}/judge"] + 0.1 * n_cells
            assert sum(selfchecks) <= stage["self-checks"] + 0.1 * n_cells
            notebook = ("kernel start", "imports", "self-checks", "other cells")
            assert 0 < sum(stage[name] for name in notebook) <= stage["notebook"] + 0.1, (unit, stage)
            assert 0 < row.seconds[f"{nb}/judge"] <= row.seconds[nb] <= row.seconds["job"]
            assert stage["notebook"] <= row.seconds[nb]
            assert stage["judge after the notebook"] < row.seconds[f"{nb}/judge"], stage  # they ran at once
            assert stage["judge child start"] > 0
            assert {
                "pair compiles",
                "pair compile seconds",
                "pair C builds",
            } <= stage.keys()  # one shared cache


# The whole demo on the GPU host in parts, each inside a 10-minute command there (on the H100: units 08-10,
# 9 gradings twice, 5 min; units 01-07 did not finish in 7 min beside other work).
CUTS = [0, COURSE.units().index("05_recomputation"), COURSE.units().index("08_flash_attention_triton"), None]
GPU_DEMO_PARTS = {
    f"units_{part[0][:2]}_{part[-1][:2]}": part
    for part in (COURSE.units()[start:end] for start, end in itertools.pairwise(CUTS))
}


@pytest.mark.gpu
@pytest.mark.parametrize("part", GPU_DEMO_PARTS)
def test_the_whole_demo_on_the_gpu_host(tmp_path, part):
    """Every unit graded, then graded again: the same score for every cell."""
    units = GPU_DEMO_PARTS[part]
    out = tmp_path / "course"
    rows = {(row.student, row.unit): row for row in demo.run(COURSE, out, units=units)}
    check_demo(rows, units)
    assert_regrade_is_identical(out, rows, units)


def assert_regrade_is_identical(out, first: dict, units: list[str]) -> None:
    """Grade the demo's submissions of `units` again in the demo's course root: every cell scores the same."""
    again_class = out.parent / "again"
    for student_folder in (out / "submissions").iterdir():
        for unit in units:
            shutil.copytree(student_folder / unit, again_class / student_folder.name / unit)
    regraded = grade.grade(Course(out, COURSE.wrong), again_class, everything=True)
    again = {(r.student, r.unit): r for r in regraded}
    assert again.keys() == {key for key in first if key[1] in units}
    for key, row in again.items():
        assert row.cells and row.cells == first[key].cells, key
        assert row.sandboxes == first[key].sandboxes == {"bubblewrap"}, key  # the sandbox was active


def test_a_regrade_of_judged_units_gives_every_cell_the_same_score(demo_course):
    """Same submission, same score: the judge's inputs are seeded per (salt, student, notebook, cell)."""
    out, first = demo_course
    judged_units = sorted(
        {unit for unit in COURSE.units() for nb in COURSE.notebooks(unit) if nb in judged.UNITS}
    )
    assert judged_units == COURSE.units(), "every unit is judged"
    assert_regrade_is_identical(out, first, DEMO_UNITS)
