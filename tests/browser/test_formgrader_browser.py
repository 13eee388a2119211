"""`course formgrader` in a real browser (issue 46): in the JupyterLab it starts, Nbgrader › Formgrader lists the
course folder's unit and its notebook's three submissions, with the written answer's points (the guide's
former `jupyter lab` in the checkout showed only formgrader's error page: tests/test_formgrader.py)."""

import pytest

pytest.importorskip(
    "playwright.sync_api",
    reason="浏览器测试已跳过：没有安装 playwright 包 / browser suite skipped: the playwright package is not installed",
)

from course_lab import chromium_executable  # noqa: E402
from handgrade_fixture import ANSWERS, NB, UNIT, formgrader_running, make_course  # noqa: E402
from labpage import open_nbgrader  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402
from test_formgrader import assignments  # noqa: E402

from course import ROOT  # noqa: E402

TIMEOUT_MS = 60_000


def test_course_formgrader_opens_on_the_course_folder(tmp_path):
    executable = chromium_executable()
    course = make_course(tmp_path / "course", ROOT)
    with formgrader_running(course, tmp_path) as (url, token, _, server), sync_playwright() as playwright:
        assert assignments(url, token, server)[0] == 200  # the server is up
        browser = playwright.chromium.launch(executable_path=executable, headless=True)
        page = browser.new_page()
        page.goto(f"{url}lab?token={token}")
        open_nbgrader(page, "nbgrader:open-formgrader")  # as the guide says: Nbgrader › Formgrader
        formgrader = page.frame_locator(".jp-MainAreaWidget:not(.lm-mod-hidden) iframe")
        expect(formgrader.locator("h1", has_text="Manage Assignments")).to_be_visible(timeout=TIMEOUT_MS)
        expect(formgrader.locator("tr", has_text=UNIT)).to_be_visible(timeout=TIMEOUT_MS)
        page.goto(f"{url}formgrader/gradebook/{UNIT}/{NB}")
        rows = page.locator("tr", has_text="Submission #")  # formgrader hides names until asked
        expect(rows).to_have_count(len(ANSWERS), timeout=TIMEOUT_MS)
        for row in rows.all():
            expect(row).to_contain_text("3 / 12")  # the autograded 3 of 9 and the written answer's 0 of 3
        browser.close()
