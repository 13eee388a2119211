"""The browser suite's fixtures: a real `jupyter lab` on loopback (course_lab.py) and Debian's Chromium driven by
Playwright.

Without Chromium or Playwright every browser test is skipped, and the skip reason says why (`pytest -ra`).
A failing test saves a screenshot and the server's log under FAILURES and names the files in its report.
"""

import os
import secrets
import shutil
from pathlib import Path

import pytest
from course_lab import ROOT, chromium_executable, serving

EXPECT_TIMEOUT_MS = 60_000  # Playwright's 5 s default is too short for nbgrader's list/fetch on 2 busy cores
FAILURES = Path(os.environ.get("COURSE_BROWSER_FAILURES", ROOT / "tests" / "browser" / "failures"))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The student's and instructor's JupyterLab (course_lab.serving), stopped when the module's tests end, so it
    does not idle through the rest of a full test run."""
    chromium_executable()  # no server without a browser to drive it
    with serving(tmp_path_factory.mktemp("lab")) as running:
        yield running


@pytest.fixture(scope="module")
def browser(lab):
    """Headless Chromium from Debian (never a Playwright download)."""
    from playwright import sync_api  # the test module skips itself where Playwright is missing

    sync_api.expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=chromium_executable(), headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(lab, browser):
    """A fresh browser page on JupyterLab in a workspace of its own; its kernels are shut down afterwards."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(EXPECT_TIMEOUT_MS)
    page.goto(f"{lab.url}lab/workspaces/{secrets.token_hex(4)}?reset&token={lab.token}")
    page.locator("#jp-main-dock-panel").wait_for()
    page.locator("#jupyterlab-splash").wait_for(state="detached")
    yield page
    context.close()
    for session in lab.api("GET", "sessions"):
        lab.api("DELETE", f"sessions/{session['id']}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On a failure, a screenshot of the page and the server's log under FAILURES, named in the report."""
    outcome = yield
    report = outcome.get_result()
    page, lab = item.funcargs.get("page"), item.funcargs.get("lab")
    if report.when != "call" or not report.failed or page is None:
        return
    FAILURES.mkdir(parents=True, exist_ok=True)
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in item.name)
    saved = []
    try:
        page.screenshot(path=FAILURES / f"{name}.png", full_page=True)
        saved.append(f"{name}.png")
    except Exception as error:  # the page may be gone; the report still says where to look
        saved.append(f"(no screenshot: {error})")
    if lab is not None:
        shutil.copy(lab.log, FAILURES / f"{name}.jupyter-lab.log")
        saved.append(f"{name}.jupyter-lab.log")
    report.sections.append(("browser failure", f"saved under {FAILURES}: {', '.join(saved)}"))
