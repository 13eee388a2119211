"""The feedback service beside the hub (`course.sh hub --feedback-service`, issue 48), in a browser: two students
hand in unit 06 in the Assignments tab; the service grades both in preview before any deadline; each student's
Fetch Feedback brings their own feedback, saying how many gradings are left today; neither reads the other's; a
third submission, over the day's quota of one, brings the bilingual quota message instead.
"""

import hashlib
import time

import pytest

pytest.importorskip(
    "playwright.sync_api",
    reason="浏览器测试已跳过：没有安装 playwright 包 / browser suite skipped: the playwright package is not installed",
)

from course_lab import COURSE_ID, RELEASED, chromium_executable  # noqa: E402
from labpage import VALIDATE_TIMEOUT_MS, open_nbgrader  # noqa: E402
from playwright.sync_api import expect  # noqa: E402
from test_hub_browser import NOTEBOOK, chromium, instructor_runs, student_hands_in  # noqa: E402, F401

from course.hub import accounts  # noqa: E402
from tests.hub_fixture import STUDENTS, as_user, course_hub  # noqa: E402

GRADED_WITHIN_S = 900  # one preview round of unit 06 for two students on two busy cores


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    chromium_executable()  # skips without a browser, before any account is made
    course_dir = tmp_path_factory.mktemp("hub") / "course"
    course_dir.mkdir()
    (course_dir / "semester.toml").write_text("[feedback]\nper_day = 1\n")
    with course_hub(course_dir, options=("--feedback-service",)) as running:
        instructor_runs(running, "-m", "nbgrader", "release_assignment", RELEASED)
        yield running


def submissions(name: str) -> list:
    """The student's submissions as `nbgrader submit` keeps them in their cache, oldest first."""
    cache = accounts.home_of(name) / ".local" / "share" / "jupyter" / "nbgrader_cache" / COURSE_ID
    return sorted(cache.glob(f"{name}+{RELEASED}+*"), key=lambda folder: folder.stat().st_mtime)


def latest_page(hub, name: str):
    """Where the service answers the student's latest submission: nbgrader's hash of its secret (the student's
    own copy, in their nbgrader cache) and the notebook."""
    latest = submissions(name)[-1]
    secret = (latest / "submission_secret.txt").read_text()
    digest = hashlib.md5((secret + NOTEBOOK.removesuffix(".ipynb")).encode()).hexdigest()
    return hub.hub_dir / "exchange" / COURSE_ID / "feedback" / f"{digest}.html"


def wait_for(paths, seconds: float, hub) -> None:
    deadline = time.monotonic() + seconds
    while not all(path.exists() for path in paths):
        assert time.monotonic() < deadline, hub.log()[-4000:]
        time.sleep(2)


def fetch_feedback(page, name: str, count: int) -> list:
    """Fetch Feedback in the student's Assignments tab, until `count` feedback pages are in their home; the
    pages, oldest submission first."""
    open_nbgrader(page, "nbgrader:open-assignment-list")
    page.get_by_role("button", name="Fetch Feedback").first.click()
    expect(page.locator("#submitted_assignments_list")).to_contain_text("view feedback")
    folder, deadline = accounts.home_of(name) / RELEASED / "feedback", time.monotonic() + 60
    while len(pages := sorted(folder.glob(f"*/{NOTEBOOK.replace('.ipynb', '.html')}"))) < count:
        assert time.monotonic() < deadline, f"{name} fetched {len(pages)} feedback pages, not {count}"
        time.sleep(1)
    return pages  # named by the submissions' times


@pytest.mark.heavy  # two preview rounds of unit 06 and a third hub: 3.5-9 min on two busy cores
def test_feedback_minutes_after_submitting_and_the_quota_message(hub, chromium):  # noqa: F811 (its fixture)
    pages = {name: student_hands_in(chromium, hub, name) for name in STUDENTS}
    wait_for([latest_page(hub, name) for name in STUDENTS], GRADED_WITHIN_S, hub)

    for name, page in pages.items():
        (own,) = fetch_feedback(page, name, 1)
        text = own.read_text()
        assert "test_forward" in text and "0 of 1 left today" in text and "今天还剩 0 次" in text, text[
            -3000:
        ]
    ana, ben = STUDENTS
    refused = as_user(ben, "cat", str(fetch_feedback(pages[ana], ana, 1)[0]))
    assert refused.returncode != 0 and "Permission denied" in refused.stderr, "ben reads ana's feedback"
    assert not hub.course_dir.joinpath("gradebook.db").exists(), "the preview never writes the gradebook"

    page = pages[ana]  # a third submission: ana again, over the day's quota of one
    open_nbgrader(page, "nbgrader:open-assignment-list")
    page.locator("#fetched_assignments_list > .list_item .item_status button", has_text="Submit").click()
    deadline = time.monotonic() + VALIDATE_TIMEOUT_MS / 1000
    while len(submissions(ana)) < 2:  # one list item per assignment: the student's nbgrader cache tells
        assert time.monotonic() < deadline, "the second Submit made no submission"
        time.sleep(1)
    wait_for([latest_page(hub, ana)], 120, hub)
    first, again = fetch_feedback(page, ana, 2)
    said = again.read_text()
    assert "used today&#x27;s 1 feedback gradings" in said and "次预览反馈已用完" in said, said
    assert "test_forward" in first.read_text(), "the first submission keeps its feedback"
