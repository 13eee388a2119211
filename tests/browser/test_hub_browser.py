"""The course on its JupyterHub (`bash course.sh hub`), as a class uses it in a browser: two students and the
instructor log in; each student fetches unit 06 in the Assignments tab, types the answers, runs the visible
self-check, validates and submits; the instructor sees it released in formgrader, collects, grades with
`course grade` through the Ray backend (a one-node cluster here) and releases the feedback; each student fetches and
sees their own feedback; a student cannot open the other's work, the exchange's inbound folder, the instructor's
course folder or the checkout's `course/`.
"""

import csv
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip(
    "playwright.sync_api",
    reason="浏览器测试已跳过：没有安装 playwright 包 / browser suite skipped: the playwright package is not installed",
)

from course_lab import COURSE_ID, RELEASED, chromium_executable  # noqa: E402
from labpage import VALIDATE_TIMEOUT_MS, open_nbgrader, run_cell, type_into, validate  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402

from course import ROOT, notebooks  # noqa: E402
from course.grading import submissions  # noqa: E402
from course.grading.local_cluster import local_cluster  # noqa: E402
from course.hub import accounts  # noqa: E402
from tests.hub_fixture import STUDENTS, as_user, course_hub  # noqa: E402

NOTEBOOK = "flash_attention_pytorch.ipynb"
EXPECT_TIMEOUT_MS = 60_000  # as the browser suite's conftest: nbgrader's lists on two busy cores
SPAWN_TIMEOUT_MS = 240_000  # a server's first start on two busy cores
SCREENSHOTS = os.environ.get("COURSE_BROWSER_SCREENSHOTS")
PASSWORDS = {name: f"{name}-first-password" for name in STUDENTS}


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    chromium_executable()  # skips without a browser, before any account is made
    with course_hub(tmp_path_factory.mktemp("hub") / "course") as running:
        instructor_runs(running, "-m", "nbgrader", "release_assignment", RELEASED)
        yield running


@pytest.fixture(scope="module")
def chromium(hub):
    with sync_playwright() as playwright:
        expect.set_options(timeout=EXPECT_TIMEOUT_MS)
        browser = playwright.chromium.launch(executable_path=chromium_executable(), headless=True)
        yield browser
        browser.close()


def instructor_runs(hub, *args: str) -> str:
    """A command in the instructor's environment (their terminal on the hub): the checkout, the course folder,
    the hub's exchange."""
    settings = accounts.read_json(hub.hub_dir / "settings.json")
    env = dict(
        os.environ,
        FLASH_COURSE_DIR=settings["course_dir"],
        JUPYTER_CONFIG_DIR=settings["instructor_config"],
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    )
    run = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run.stdout + run.stderr


def log_in(chromium, hub, name: str, password: str):
    """A browser of its own, logged in; returns the page once the user's JupyterLab has loaded."""
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(EXPECT_TIMEOUT_MS)
    page.goto(f"{hub.url}hub/login")
    page.locator("#username_input").fill(name)
    page.locator("#password_input").fill(password)
    page.locator("#login_submit").click()
    page.wait_for_url(re.compile(rf"/user/{name}/lab"), timeout=SPAWN_TIMEOUT_MS)
    page.locator("#jp-main-dock-panel").wait_for(timeout=SPAWN_TIMEOUT_MS)
    page.locator("#jupyterlab-splash").wait_for(state="detached", timeout=SPAWN_TIMEOUT_MS)
    return page


def open_home_notebook(page, hub, name: str, path: str):
    page.goto(f"{hub.url}user/{name}/lab/tree/{path}")
    panel = page.locator(".jp-NotebookPanel").filter(visible=True)
    panel.locator(".jp-Cell").first.wait_for()
    expect(panel.locator(".jp-Notebook-ExecutionIndicator")).to_have_attribute("data-status", "idle")
    return panel


def student_hands_in(chromium, hub, name: str):
    """Fetch, answer, self-check, Validate and Submit, all in the student's browser; returns the page."""
    page = log_in(chromium, hub, name, PASSWORDS[name])
    open_nbgrader(page, "nbgrader:open-assignment-list")
    released = page.locator("#released_assignments_list > .list_item")
    expect(released.locator(".item_course")).to_have_text(COURSE_ID)
    released.locator(".item_status button").click()
    expect(page.locator("#fetched_assignments_list > .list_item .item_name").first).to_have_text(RELEASED)

    fetched = accounts.home_of(name) / RELEASED / NOTEBOOK
    assert fetched.exists(), "Fetch did not write the notebook into the student's home"
    panel = open_home_notebook(page, hub, name, f"{RELEASED}/{NOTEBOOK}")
    index = {notebooks.meta(c).get("grade_id"): i for i, c in enumerate(notebooks.read(fetched).cells)}
    cells = panel.locator(".jp-Notebook .jp-Cell")
    for grade_id, answer in answers().items():
        type_into(cells.nth(index[grade_id]), answer)
    run_cell(panel.locator(".jp-CodeCell").first)  # the imports
    for grade_id in ("grading_setup", "fa_score_tile"):
        run_cell(cells.nth(index[grade_id]))
    out = run_cell(cells.nth(index["test_score_tile"]))
    assert "self-check passed" in out, out
    passed, message = validate(panel)
    assert passed, message

    open_nbgrader(page, "nbgrader:open-assignment-list")
    page.locator("#fetched_assignments_list > .list_item .item_status button", has_text="Submit").click()
    expect(page.locator("#submitted_assignments_list > .list_item").first).to_be_visible(
        timeout=VALIDATE_TIMEOUT_MS
    )
    return page


def answers() -> dict[str, str]:
    return submissions.reference_answers(notebooks.read(ROOT / "source" / RELEASED / NOTEBOOK))


def test_two_students_and_the_instructor_through_the_hub(hub, chromium):
    pages = {name: student_hands_in(chromium, hub, name) for name in STUDENTS}

    instructor = accounts.owner_of(ROOT)
    password = (hub.hub_dir / accounts.INSTRUCTOR_PASSWORD).read_text().strip()
    teacher = log_in(chromium, hub, instructor, password)
    open_nbgrader(teacher, "nbgrader:open-formgrader")
    formgrader = teacher.frame_locator(".jp-MainAreaWidget:not(.lm-mod-hidden) iframe")
    expect(formgrader.locator("tr", has_text=RELEASED)).to_contain_text("released")

    instructor_runs(hub, "-m", "nbgrader", "collect", RELEASED)
    with local_cluster(nodes=1) as ray_head:  # grading through the Ray backend, as on a cluster (guide 5.1)
        graded = instructor_runs(hub, "-m", "course", "grade", "--unit", RELEASED, "--ray", ray_head.address)
    with (hub.course_dir / "grades.csv").open() as table:
        rows = {row["student_id"]: row for row in csv.DictReader(table)}
    assert sorted(rows) == STUDENTS and all(row["node"] for row in rows.values()), graded[-3000:]
    for name in STUDENTS:
        assert (hub.course_dir / "feedback" / name / RELEASED).is_dir(), graded[-3000:]
    instructor_runs(hub, "-m", "nbgrader", "release_feedback", RELEASED)

    for name, page in pages.items():
        open_nbgrader(page, "nbgrader:open-assignment-list")
        page.get_by_role("button", name="Fetch Feedback").click()
        expect(page.locator("#submitted_assignments_list")).to_contain_text("view feedback")
        own = list(
            (accounts.home_of(name) / RELEASED / "feedback").glob(f"*/{NOTEBOOK.replace('.ipynb', '.html')}")
        )
        submitted = (hub.course_dir / "submitted" / name / RELEASED / "timestamp.txt").read_text().strip()
        assert [p.parent.name for p in own] == [submitted], "the feedback of this student's own submission"
        assert "test_forward" in own[0].read_text()
        if SCREENSHOTS and name == STUDENTS[0]:
            Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=Path(SCREENSHOTS) / "hub_assignments_tab.png")

    ana, ben = STUDENTS
    inbound = hub.hub_dir / "exchange" / COURSE_ID / "inbound"
    for private in (
        accounts.home_of(ana) / RELEASED / NOTEBOOK,  # the other's work
        inbound,  # the exchange's inbound folder: writable (submit), never listable
        hub.course_dir / "submitted",  # the instructor's course folder
        ROOT / "course",  # the instructor's code (judges, reference, wrong implementations)
    ):
        opened = as_user(ben, "ls", str(private)) if private.is_dir() else as_user(ben, "cat", str(private))
        assert opened.returncode != 0 and "Permission denied" in opened.stderr, (private, opened.stdout)

    assert hub.stop() == 0, "Ctrl-C"
    deadline = time.monotonic() + 30
    while any(running_as(name) for name in STUDENTS) and time.monotonic() < deadline:
        time.sleep(1)
    assert not [name for name in STUDENTS if running_as(name)], (
        "Ctrl-C stops every student's server and kernel"
    )


def running_as(name: str) -> bool:
    return subprocess.run(["pgrep", "-u", name], capture_output=True).returncode == 0
