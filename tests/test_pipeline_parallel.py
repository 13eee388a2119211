"""`python -m course grade --jobs N` on the fixture: concurrent grading gives the scores, statuses and
gradebook of a sequential run (each pair graded against a private gradebook, then merged), a crashing
student stays isolated, and a parallel re-run is idempotent."""

import shutil
import time

import pytest
from nbgrader.api import Gradebook
from pipeline_fixture import UNIT, course_copy

from course import cli
from course.grading import grade, resources, worker
from course.grading.runner import run_job, worker_env
from course.layout import Course


def snapshot(root):
    """Every grade, comment and notebook flag in the course's gradebook, read through nbgrader's API."""
    api = worker.make_api(str(root))
    entries, submissions = {}, []
    with Gradebook(api.coursedir.db_url, api.coursedir.course_id) as gb:
        for assignment in gb.assignments:
            for submission in assignment.submissions:
                submissions.append((submission.student.id, assignment.name))
                for nb in submission.notebooks:
                    key = (submission.student.id, assignment.name, nb.name)
                    entries[(*key, "notebook")] = (nb.flagged, nb.late_submission_penalty)
                    for g in nb.grades:
                        entries[(*key, g.name)] = (
                            g.auto_score,
                            g.manual_score,
                            g.extra_credit,
                            g.needs_manual_grade,
                        )
                    for c in nb.comments:
                        entries[(*key, c.name)] = (c.auto_comment, c.manual_comment)
    return entries, sorted(submissions)


def outcome(rows):
    return [(r.student, r.unit, r.score, r.max_score, r.status) for r in rows]


@pytest.fixture(scope="module")
def graded(tmp_path_factory, class_graded_one_at_a_time):
    """The sample class plus a student who left one notebook blank and skipped the other, graded 3 at a
    time; the session's grading of it one at a time, then a copy of that course graded by nbgrader directly; then
    re-run."""
    tmp = tmp_path_factory.mktemp("parallel")
    class_folder, alone, one_at_a_time = class_graded_one_at_a_time
    mp = pytest.MonkeyPatch()
    mp.setenv("FLASH_COURSE_CELL_TIMEOUT", "10")
    parallel = course_copy(tmp / "parallel")
    rows = grade.grade(parallel, class_folder, timeout=300, jobs=3)
    first = snapshot(parallel.root)
    sequential = Course(tmp / "sequential", alone.wrong)
    shutil.copytree(alone.root, sequential.root)
    for row in one_at_a_time:  # nbgrader writing the course's gradebook itself, as before --jobs existed
        present = sorted(p.name for p in (class_folder / row.student / UNIT).glob("*.ipynb"))
        request = {"action": "autograde", "root": str(sequential.root), "unit": UNIT, "student": row.student}
        run_job({**request, "notebooks": present}, 300)
    direct = snapshot(sequential.root)
    again = grade.grade(parallel, class_folder, timeout=300, jobs=3, everything=True)
    mp.undo()
    return parallel, rows, first, one_at_a_time, direct, again, snapshot(parallel.root)


def test_parallel_grading_matches_one_at_a_time(graded):
    _, rows, _, one_at_a_time, *_ = graded
    assert outcome(rows) == outcome(one_at_a_time)
    assert [r.student for r in rows] == ["alice_correct", "bob_partial", "carol_crash", "dan_blank"]


def test_merged_gradebook_equals_what_nbgrader_writes_itself(graded):
    _, rows, first, _, direct, *_ = graded
    entries, submissions = first
    assert first == direct
    assert submissions == [(r.student, UNIT) for r in rows]
    for row in rows:
        auto = [v[0] for k, v in entries.items() if k[0] == row.student and k[3].startswith("test_")]
        assert auto and sum(score or 0.0 for score in auto) == row.score, row.student
    assert entries[("dan_blank", UNIT, "logsumexp", "lse_impl")][0]  # nbgrader's comment on a blank answer


def test_outputs_for_formgrader_and_feedback_are_in_the_course_root(graded):
    parallel, rows, *_ = graded
    for row in rows:
        assert (parallel.autograded / row.student / UNIT / "logsumexp.ipynb").is_file()
        assert (parallel.feedback / row.student / UNIT / "logsumexp.html").is_file()
    log = (parallel.autograded / "grading.log").read_text()
    assert all(f"######## {r.student}/{UNIT}" in log for r in rows)


def test_broken_submissions_stay_isolated_when_graded_in_parallel(graded):
    _, rows, *_ = graded
    alice, bob, carol, dan = rows
    assert alice.status == "graded" and alice.score == alice.max_score > 0
    assert bob.status == "graded" and 0 < bob.score < bob.max_score
    assert carol.status == "kernel died (softmax.ipynb)" and carol.score > 0
    assert (dan.status, dan.score) == ("missing (softmax.ipynb)", 0.0)


def test_parallel_regrading_is_idempotent(graded):
    _, rows, first, *_, again, after = graded
    assert outcome(again) == outcome(rows)
    assert after == first


@pytest.mark.parametrize(
    ("pairs", "cpus", "gpu_gib", "expected"),
    [
        (100, 16, 80, 12),  # the H100 host: three quarters of the cores
        (9, 16, 80, 9),
        (100, 64, 80, 20),  # the GPU's memory bounds it
        (100, 16, 8, 2),
        (9, 6, 80, 4),
        (9, 1, 80, 1),
        (9, 16, 2, 1),
        (9, 2, None, 2),  # a CPU: one per core
        (1, 16, None, 1),
    ],
)
def test_default_jobs(pairs, cpus, gpu_gib, expected):
    assert resources.default_jobs(pairs, cpus, gpu_gib) == expected


@pytest.mark.parametrize(
    ("cpus", "gpu_gib", "memory_gib", "expected"),
    [
        (16, 140, 94, 12),  # the H200 host (125 GiB, three quarters for gradings): the cores bound it
        (16, 140, 40, 6),  # 3 GiB for each of a job's two gradings
        (8, None, 12, 6),  # a 16 GiB laptop: 1 GiB each on a CPU
        (2, None, 17, 2),  # CI
        (8, None, 1, 1),
    ],
)
def test_default_jobs_leave_each_grading_the_memory_it_needs(cpus, gpu_gib, memory_gib, expected):
    assert resources.default_jobs(100, cpus, gpu_gib, memory_gib) == expected


def test_too_many_jobs_for_the_memory_are_said(capsys):
    resources.warn_memory(6, 12, "cpu")
    assert capsys.readouterr().out == ""
    resources.warn_memory(8, 12, "cpu")
    assert "0.8 GiB" in capsys.readouterr().out


def test_jobs_below_one_is_a_clear_error(tmp_path, capsys):
    assert cli.main(["grade", str(tmp_path), "--jobs", "0"]) == 2
    assert "--jobs must be at least 1, got 0" in capsys.readouterr().out


def test_concurrent_jobs_share_the_cores_unless_the_user_chose_a_thread_count(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert worker_env(3)["OMP_NUM_THREADS"] == "3"
    assert "OMP_NUM_THREADS" not in worker_env()
    monkeypatch.setenv("OMP_NUM_THREADS", "5")
    assert worker_env(3)["OMP_NUM_THREADS"] == "5"


def merge_batches(monkeypatch, tmp_path, pairs: int, jobs: int, merge_seconds: float) -> list[list[str]]:
    """The batches `grade_pairs` merges `pairs` instantly graded pairs in, `jobs` at a time, each merge taking
    `merge_seconds`; every pair merged exactly once and the rows in the order of the pairs."""
    merged = []

    def slow_merge(course, rows, folders, log, *_):
        merged.append([row.student for row in rows])
        time.sleep(merge_seconds)

    monkeypatch.setattr(grade, "grade_pair", lambda course, student, unit, *_: grade.Row(student, unit, 1.0))
    monkeypatch.setattr(grade, "merge_gradebooks", slow_merge)
    monkeypatch.setattr(grade, "save_progress", lambda course, row: None)
    students = [f"s{i:02d}" for i in range(pairs)]
    folders = [tmp_path / s for s in students]
    for folder in folders:
        folder.mkdir()
    rows = grade.grade_pairs(None, [(s, UNIT) for s in students], folders, 60, jobs, tmp_path / "grading.log")
    assert [row.student for row in rows] == students
    assert sorted(s for batch in merged for s in batch) == students
    return merged


def test_pairs_that_finish_during_a_merge_go_in_together(monkeypatch, tmp_path):
    """A class that finishes at once queues no merge per pair: those that finish while one merge runs share
    the next."""
    merged = merge_batches(monkeypatch, tmp_path, 8, 8, 0.5)
    assert len(merged) <= 3, merged


def test_more_pairs_than_jobs_still_merge_in_batches(monkeypatch, tmp_path):
    """A pair whose row another pair's merge took is done: its thread grades the next pair as that merge ends
    instead of waiting its turn for the merge lock and then merging a lone late pair (once a merge per pair after
    the first few, 64 merges for 80 pairs in the week's benchmark): at 4 jobs, two pairs a merge at least."""
    merged = merge_batches(monkeypatch, tmp_path, 24, 4, 0.3)
    assert len(merged) <= 24 // 2, merged
