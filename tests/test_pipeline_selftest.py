"""`python -m course selftest` on the fixture: real mistakes are caught, a harmless 'mistake' is reported."""

import contextlib
import shutil
from collections import deque
from types import SimpleNamespace

import pytest
from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT

from course import notebooks, selftest, wrong
from course.grading import pool
from course.layout import COURSE, Course


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """The fixture course plus a 'wrong' implementation that is in fact correct, minus one lse mistake."""
    root = tmp_path_factory.mktemp("selftest")
    course = Course(root / "course", root / "wrong")
    shutil.copytree(FIXTURE / "source", course.source)
    shutil.copytree(FIXTURE / "wrong", course.wrong)
    (course.wrong / UNIT / "lse_max_only.py").unlink()
    reference = notebooks.without_markers(
        notebooks.solution_cells(notebooks.read(course.source / UNIT / "softmax.ipynb"))[
            "softmax_impl"
        ].source
    )
    (course.wrong / UNIT / "softmax_not_wrong.py").write_text(
        "# selftest-notebook: softmax.ipynb\n# selftest-replaces: softmax_impl\n"
        "# selftest-must-fail: test_large_inputs\n# Mistake: none (the reference answer).\n"
        + reference
        + "\n"
    )
    cases, problems = selftest.run(course, [UNIT], jobs=2)
    return course, cases, problems


def test_every_real_mistake_loses_points_and_the_reference_scores_full_marks(planted):
    course, cases, _ = planted
    verdicts = {c.student: c.verdict(selftest.points(course, c.unit, c.notebook)) for c in cases}
    expected = {"solution", "stubs"} | {f"wrong-{w.name}" for w in wrong.load(course.wrong / UNIT)}
    assert expected <= verdicts.keys()
    surprises = {s: v for s, v in verdicts.items() if v is not None and s != "wrong-softmax_not_wrong"}
    assert surprises == {}


def test_a_mistake_that_keeps_its_points_and_a_thin_exercise_are_surprises(planted, capsys):
    course, cases, problems = planted
    harmless = next(c for c in cases if c.student == "wrong-softmax_not_wrong")
    verdict = harmless.verdict(selftest.points(course, UNIT, "softmax.ipynb"))
    assert verdict is not None and "test_large_inputs" in verdict
    assert any("lse_impl has 2 wrong implementations (< 3)" in p for p in problems), problems
    assert selftest.report(course, cases, problems) == 2
    out = capsys.readouterr().out
    assert "selftest FAILED: 2 surprise(s)" in out and "✗ does not lose points" in out


def test_stubs_lose_every_point_and_the_solution_earns_every_point(planted):
    course, cases, _ = planted
    for case in cases:
        points = selftest.points(course, case.unit, case.notebook)
        scores = {gid: score for gid, (score, _) in case.result["scores"].items() if gid in points}
        if case.kind == "solution":
            assert scores == points
        if case.kind == "stubs":
            assert scores == dict.fromkeys(points, 0.0)


def test_the_committed_fixture_passes_selftest_statically():
    impls = wrong.load(FIXTURE_COURSE.wrong / UNIT)
    assert selftest.static_problems(FIXTURE_COURSE, UNIT, impls) == []


def test_wrong_file_without_header_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("# selftest-notebook: softmax.ipynb\ndef stable_softmax(xs):\n    return xs\n")
    with pytest.raises(ValueError, match="missing header line.*selftest-replaces, # selftest-must-fail"):
        wrong.parse(path)


def test_wrong_file_header_is_parsed():
    impl = wrong.parse(FIXTURE / "wrong" / UNIT / "softmax_no_normalize.py")
    assert (impl.notebook, impl.replaces) == ("softmax.ipynb", "softmax_impl")
    assert impl.must_fail == ("test_sums_to_one", "test_matches_reference")
    assert impl.body.startswith("def stable_softmax(xs):") and "selftest" not in impl.body


def test_a_mistake_whose_visible_self_check_passes_is_a_surprise_when_its_header_says_it_must_fail():
    scores = {"scores": {"test_x": [0.5, 1.0]}, "status": "graded"}
    case = selftest.Case("u", "n.ipynb", "wrong-w", "wrong", None, ("test_x",), ("test_x",))
    case.result = {**scores, "judge": {"selfchecks": {"test_x": True}}}
    assert case.verdict({"test_x": 1.0}) == "the visible self-check passes on ['test_x']"
    case.result = {**scores, "judge": {"selfchecks": {"test_x": False}}}
    assert case.verdict({"test_x": 1.0}) is None
    case.result = {**scores, "judge": {"selfchecks": {"test_x": None}}}  # the kernel died before the cell
    case.result["status"] = "kernel died"
    assert case.verdict({"test_x": 1.0}) == "the visible self-check did not run on ['test_x'] (kernel died)"


def test_the_visible_catch_rate_counts_graded_mistakes_whose_notebook_check_fails(capsys):
    def case(unit, name, selfchecks, status="graded"):
        made = selftest.Case(unit, "n.ipynb", f"wrong-{name}", "wrong", None, ("test_x", "test_y"))
        made.result = {"status": status, "judge": {"selfchecks": selfchecks}}
        return made

    cases = [
        case("u1", "seen", {"test_x": True, "test_y": False}),
        case("u1", "unseen", {"test_x": True, "test_y": True}),
        case("u1", "crashed", {}, status="error"),
        case("u2", "seen_too", {"test_x": False}),
        selftest.Case("u1", "n.ipynb", "solution", "solution", None),
    ]
    assert selftest.visible_catch(cases) == {"u1": (1, ["unseen"]), "u2": (1, [])}
    selftest.print_visible_catch(cases)
    out = capsys.readouterr().out
    assert "u1: the visible self-checks catch 1 of 2 wrong implementations (50%)" in out
    assert "missed: unseen" in out and "u2: the visible self-checks catch 1 of 1" in out


def test_selfcheck_fails_header_is_parsed(tmp_path):
    path = tmp_path / "w.py"
    path.write_text(
        "# selftest-notebook: n.ipynb\n# selftest-replaces: impl\n# selftest-must-fail: test_a, test_b\n"
        "# selftest-selfcheck-fails: test_a\ndef f():\n    pass\n"
    )
    assert wrong.parse(path).selfcheck_fails == ("test_a",)


def test_attacks_only_grades_the_solution_the_stubs_and_every_attack_and_nothing_else(monkeypatch):
    graded = []

    def take_all(course, root, units, queue, timeout, progress, where, at_once):
        while queue:
            with contextlib.suppress(IndexError):  # another slot took the last one
                graded.append(queue.popleft())

    monkeypatch.setattr(selftest, "run_slot", take_all)
    unit = "06_flash_attention_pytorch"
    cases, _ = selftest.run(COURSE, [unit], jobs=2, attacks_only=True)
    attacks = {a.name for a in wrong.load(COURSE.redteam / unit, "redteam")}
    assert {c.kind for c in cases} == {"solution", "stubs", "redteam"}
    assert {c.student for c in cases if c.kind == "redteam"} == {f"redteam-{name}" for name in attacks}
    assert sorted(c.student for group in graded for c in group) == sorted(c.student for c in cases)


def test_a_case_that_was_not_graded_shows_the_last_error_of_its_own_job(monkeypatch, tmp_path):
    """A worker that dies before grading (the judge's imports failing where a dependency is missing) leaves no
    result: the verdict carries the last error its job logged, not one of an earlier job of the same slot."""
    course = Course(tmp_path / "course", tmp_path / "wrong")
    shutil.copytree(FIXTURE / "source", course.source)
    slot = tmp_path / "slot"
    slot.mkdir()
    (slot / "selftest.log").write_text("ValueError: an earlier job's error\n")
    logged = iter(
        [
            "Traceback (most recent call last):\nModuleNotFoundError: No module named 'hypothesis'\n",
            "Killed\n",
        ]
    )

    def crashed_job(request, timeout, log, threads=None, gpu=None, at_once=1):
        with open(log, "a", encoding="utf-8") as sink:
            sink.write(next(logged))
        return {}, False

    monkeypatch.setattr(pool, "run_job", crashed_job)  # the local pool's
    monkeypatch.setattr(selftest.grade, "register_units", lambda course, units: None)
    name = course.notebooks(UNIT)[0]
    cases = [
        selftest.Case(UNIT, name, kind, kind, notebooks.read(course.source / UNIT / name))
        for kind in ("solution", "variant")
    ]
    progress = SimpleNamespace(write=lambda line: None, update=lambda count: None)
    selftest.run_slot(course, slot, [UNIT], deque([[cases[0]], [cases[1]]]), 60, progress)
    tests = selftest.points(course, UNIT, name)
    missing, killed = (case.verdict(tests) for case in cases)
    assert missing.startswith("error (ModuleNotFoundError: No module named 'hypothesis'); not full marks")
    assert killed.startswith("error (Killed); not full marks")
    first = next(iter(tests))
    wrong_case = selftest.Case(UNIT, name, "w", "wrong", None, must_fail=(first,))
    wrong_case.result = {  # the judge's scores stand where the kernel died after it judged
        "status": "kernel died",
        "scores": {first: [tests[first], tests[first]]},
        "log": "nbclient.exceptions.DeadKernelError: Kernel died\n",
    }
    assert wrong_case.verdict(tests).endswith(
        "(kernel died (nbclient.exceptions.DeadKernelError: Kernel died))"
    )
