"""`course formgrader` in a real browser (issue 46): in the JupyterLab it starts, Nbgrader › Formgrader lists the
course folder's unit and its notebook's three submissions, with the written answer's points (the guide's
former `jupyter lab` in the checkout showed only formgrader's error page: tests/test_formgrader.py).

And issue 45, principle 1: what a student wrote never runs with the instructor's rights. One student's written
answer (a markdown cell) carries a <script>, an <img onerror> and an <svg onload>, and links to an .html and an
.svg handed in beside the notebook, each a real script that reads a file only the instructor may read through the
server's API and writes it back as stolen-<how>.txt, then opens a terminal; a last link makes formgrader read the
nbgrader_config.py handed in (Python that steals the same way); the student's name in the roster is one more
<img onerror>; a <span> of the answer wears the classes of formgrader's "Full credit" button; and a script and
an <img onerror> are planted in formgrader's page as if past its sanitiser (its Content-Security-Policy stops
them). The instructor opens
the submission in formgrader, follows its links, opens the student's feedback and the .html file handed in
through the Lab's /files/, and the notebook itself in the Lab (formgrader's "Open live notebook"; JupyterLab's own
sanitiser); the same script run in formgrader's page by the test itself (the control) does steal, so the payload is
a working one."""

import html
import re
import time

import pytest

pytest.importorskip(
    "playwright.sync_api",
    reason="浏览器测试已跳过：没有安装 playwright 包 / browser suite skipped: the playwright package is not installed",
)

from course_lab import chromium_executable  # noqa: E402
from handgrade_fixture import ANSWERS, NB, UNIT, WRITTEN, formgrader_running, make_course  # noqa: E402
from labpage import open_nbgrader  # noqa: E402
from nbgrader.api import Gradebook  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402
from test_feedback_safety import feedback_html  # noqa: E402
from test_formgrader import assignments  # noqa: E402

from course import ROOT, notebooks  # noqa: E402
from course.grading import gradebook_db  # noqa: E402

TIMEOUT_MS = 60_000
HOSTILE = "carol"  # the student whose submission attacks
SECRET_FILE = "instructor_only.txt"  # in the server's root: stands for the salt, the gradebook
SECRET = "the salt of this semester"


def payload(how: str) -> str:
    """JavaScript that, run with the instructor's rights, reads SECRET_FILE through the server's API, writes it back
    as stolen-<how>.txt, then opens a terminal."""
    return (
        "(async () => {"
        "const xsrf = decodeURIComponent((document.cookie.match(/_xsrf=([^;]+)/) || [])[1] || '');"
        "const headers = {'X-XSRFToken': xsrf, 'Content-Type': 'application/json'};"
        f"const secret = await (await fetch('/api/contents/{SECRET_FILE}')).json();"
        f"await fetch('/api/contents/stolen-{how}.txt', {{method: 'PUT', headers,"
        " body: JSON.stringify({type: 'file', format: 'text', content: secret.content})});"
        "await fetch('/api/terminals', {method: 'POST', headers});"
        "})()"
    )


def attribute(how: str) -> str:
    return html.escape(payload(how), quote=True)


HOSTILE_ANSWER = f"""My answer.

<script>{payload("markdown-script")}</script>

<img src="nowhere.png" onerror="{attribute("markdown-img-onerror")}">

<svg onload="{attribute("markdown-svg-onload")}"></svg>

<span class="btn btn-success full-credit">Next submission →</span>

<a href="evil.html">my working</a> and <a href="evil.svg">my figure</a> and <a href="{{settings}}">my settings</a>
"""

ROSTER_NAME = f'<img src="nowhere.png" onerror="{attribute("roster-name")}">'
HANDED_IN = {
    "evil.html": f"<!DOCTYPE html><html><body><script>{payload('file-html')}</script></body></html>",
    "evil.svg": (
        '<svg xmlns="http://www.w3.org/2000/svg"><script type="text/javascript">'
        f"{html.escape(payload('file-svg'), quote=False)}</script></svg>"
    ),
}


def planted_config(root) -> str:
    """An nbgrader_config.py handed in: Python that steals, were formgrader made to read it."""
    return (
        f"from pathlib import Path\nroot = Path({str(root)!r})\n"
        f"(root / 'stolen-formgrader-path.txt').write_text((root / {SECRET_FILE!r}).read_text())\n"
    )


def settings_link(course) -> str:
    """formgrader made to read the configuration HOSTILE handed in (nbgrader's ?path=)."""
    return f"/formgrader?path={course.submitted / HOSTILE / UNIT}"


def hostile_submission(course) -> None:
    """HOSTILE's written answer made HOSTILE_ANSWER, the files handed in beside the notebook (in submitted/, where
    they stay: formgrader serves them from there), and the feedback of that notebook as the course makes it."""
    for folder in (course.submitted, course.autograded):
        path = folder / HOSTILE / UNIT / f"{NB}.ipynb"
        nb = notebooks.read(path)
        answer = HOSTILE_ANSWER.replace("{settings}", html.escape(settings_link(course)))
        next(c for c in nb.cells if notebooks.meta(c).get("grade_id") == WRITTEN).source = answer
        notebooks.write(nb, path)
    (course.submitted / HOSTILE / UNIT / "nbgrader_config.py").write_text(planted_config(course.root))
    with Gradebook(gradebook_db.url(course), gradebook_db.COURSE_ID) as gb:  # a name chosen in the LMS
        gb.update_or_create_student(HOSTILE, first_name="Carol", last_name=ROSTER_NAME)
    feedback = course.root / "feedback" / HOSTILE / UNIT
    feedback.mkdir(parents=True)
    (feedback / f"{NB}.html").write_text(feedback_html(nb))
    for name, text in HANDED_IN.items():
        (course.submitted / HOSTILE / UNIT / name).write_text(text)
    (course.root / SECRET_FILE).write_text(SECRET)


@pytest.fixture(scope="module")
def formgrader(tmp_path_factory):
    """(URL, token, course) of `course formgrader` on unit 01's three students, one of them HOSTILE."""
    executable = chromium_executable()
    folder = tmp_path_factory.mktemp("formgrader")
    course = make_course(folder / "course", ROOT)
    hostile_submission(course)
    with formgrader_running(course, folder) as (url, token, _, server), sync_playwright() as playwright:
        assert assignments(url, token, server)[0] == 200  # the server is up
        browser = playwright.chromium.launch(executable_path=executable, headless=True)
        yield url, token, course, browser
        browser.close()


@pytest.fixture
def page(formgrader):
    *_, browser = formgrader
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    yield page
    context.close()


def test_course_formgrader_opens_on_the_course_folder(formgrader, page):
    url, token, *_ = formgrader
    page.goto(f"{url}lab?token={token}")
    open_nbgrader(page, "nbgrader:open-formgrader")  # as the guide says: Nbgrader › Formgrader
    formgrader_frame = page.frame_locator(".jp-MainAreaWidget:not(.lm-mod-hidden) iframe")
    expect(formgrader_frame.locator("h1", has_text="Manage Assignments")).to_be_visible(timeout=TIMEOUT_MS)
    expect(formgrader_frame.locator("tr", has_text=UNIT)).to_be_visible(timeout=TIMEOUT_MS)
    page.goto(f"{url}formgrader/gradebook/{UNIT}/{NB}")
    rows = page.locator("tr", has_text="Submission #")  # formgrader hides names until asked
    expect(rows).to_have_count(len(ANSWERS), timeout=TIMEOUT_MS)
    for row in rows.all():
        expect(row).to_contain_text("3 / 12")  # the autograded 3 of 9 and the written answer's 0 of 3


# a script and an inline handler added to formgrader's page, as a student's cell would bring them
PLANT = """([script, img]) => {
    const element = document.createElement("script");
    element.textContent = script;
    document.body.append(element);
    document.body.insertAdjacentHTML("beforeend", img);
}"""


def settle(page) -> None:
    """Wait until the page has loaded and no request has been in flight for half a second (a script the page ran
    has made its requests by then)."""
    page.wait_for_load_state("networkidle")


def written_score(course) -> float | None:
    """HOSTILE's hand-given points for the written answer, in the gradebook."""
    with Gradebook(gradebook_db.url(course), gradebook_db.COURSE_ID) as gb:
        return gb.find_grade(WRITTEN, NB, UNIT, HOSTILE).manual_score


def saved_score(course, points: float, seconds: float = 30) -> float | None:
    """HOSTILE's written answer's points once formgrader has saved `points` (or what it holds after `seconds`)."""
    deadline = time.monotonic() + seconds
    while (score := written_score(course)) != points and time.monotonic() < deadline:
        time.sleep(0.2)
    return score


def stolen(course) -> dict[str, str]:
    return {path.name: path.read_text() for path in course.root.glob("stolen-*.txt")}


def test_a_student_s_script_never_runs_with_the_instructor_s_rights(formgrader, page):
    url, token, course, _ = formgrader
    with Gradebook(gradebook_db.url(course), gradebook_db.COURSE_ID) as gb:
        submission = gb.find_submission_notebook(NB, UNIT, HOSTILE).id
    page.goto(f"{url}api/status?token={token}")  # logged in to the whole server, as the Lab logs in
    response = page.goto(f"{url}formgrader/submissions/{submission}/")  # as a TA grades it
    assert "object-src 'none'" in response.headers["content-security-policy"]  # formgrader_csp
    expect(page.locator(".nbgrader_cell", has_text="My answer.")).to_be_visible()
    settle(page)
    score = page.locator(f"input.score#{WRITTEN}")  # hand grading still works on the sanitised page
    score.fill("2")
    score.blur()
    assert saved_score(course, 2) == 2
    written = page.locator(".nbgrader_cell", has=score)
    written.locator("button.no-credit").click()  # 0 again, as the other test expects it
    assert saved_score(course, 0) == 0
    written.get_by_text(
        "Next submission →"
    ).click()  # the answer's own "button": nbgrader's Full credit before
    assert saved_score(course, 3, seconds=3) == 0  # no save started by then
    page.locator("li.next a").click()  # its redirect is a page, not a download
    expect(page).to_have_url(re.compile(rf"/formgrader/(submissions/(?!{submission})[^/]+/|gradebook/)"))
    for link in ("evil.html", "evil.svg", settings_link(course)):  # the TA follows the answer's links
        page.goto(f"{url}formgrader/submissions/{submission}/")
        page.locator(f'a[href="{link}"]').click()
        settle(page)
    # the student's feedback, and the file handed in beside the notebook
    for opened in (f"feedback/{HOSTILE}/{UNIT}/{NB}.html", f"submitted/{HOSTILE}/{UNIT}/evil.html"):
        page.goto(f"{url}files/{opened}")
        settle(page)
    page.goto(f"{url}lab/tree/autograded/{HOSTILE}/{UNIT}/{NB}.ipynb")  # formgrader's "Open live notebook"
    expect(page.locator(".jp-MarkdownOutput", has_text="My answer.")).to_be_attached(timeout=TIMEOUT_MS)
    settle(page)
    page.goto(f"{url}formgrader/submissions/{submission}/")  # as if past the sanitiser: the policy stops them
    page.evaluate(
        PLANT, [payload("planted-script"), f'<img src="nowhere.png" onerror="{attribute("planted-img")}">']
    )
    settle(page)
    assert stolen(course) == {}
    page.goto(f"{url}formgrader/submissions/{submission}/")
    page.evaluate(payload("control"))  # the same script, run in formgrader's page by the test: it steals
    settle(page)
    assert stolen(course) == {"stolen-control.txt": SECRET}
