"""`course formgrader` (issue 46, item 2): JupyterLab's formgrader works on the course folder. The guide's former
launch, `jupyter lab` in the checkout, serves formgrader's error (the course folder lies outside the server's
root); the command's launch answers formgrader's API with the course's units, with no terminals, and serves the
files a student handed in (from submitted/) as sandboxed downloads, and refuses formgrader?path= (another folder's
configuration, run as Python) (issue 45; the attacks in a browser: tests/browser). Each case starts one real server
(~10 s); no browser (the formgrader's pages in Chromium are the browser suite's). The course's pages answer before
nbgrader's whichever extension loads first (no server, < 1 s)."""

import json
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from handgrade_fixture import NB, UNIT, formgrader_running, make_course
from nbgrader.api import Gradebook

from course import ROOT
from course.grading import gradebook_db


def assignments(url: str, token: str, server: subprocess.Popen, seconds: float = 120) -> tuple[int, str]:
    """(status, body) of formgrader's list of assignments, once the server answers."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert server.poll() is None, "jupyter lab exited"
        request = urllib.request.Request(f"{url}formgrader/api/assignments")
        request.add_header("Authorization", f"token {token}")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(errors="replace")
        except OSError:
            time.sleep(0.5)
    raise TimeoutError("jupyter lab did not answer")


def get(url: str, token: str) -> tuple[int, dict]:
    """(status, headers) of a GET as the instructor."""
    request = urllib.request.Request(urllib.parse.quote(url, safe=":/?=&%"))
    request.add_header("Authorization", f"token {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers)


@pytest.mark.parametrize("launch", ["course formgrader", "jupyter lab in the checkout"])
def test_formgrader_works_on_the_course_folder_only_through_the_command(launch, tmp_path):
    course = make_course(tmp_path / "course", ROOT)
    handed_in, ran = course.submitted / "alice" / UNIT, tmp_path / "ran"
    (handed_in / "work.html").write_text("<script>fetch('/api/contents')</script>")  # stays in submitted/
    (handed_in / "nbgrader_config.py").write_text(f"open({str(ran)!r}, 'w').close()\n")
    with Gradebook(gradebook_db.url(course), gradebook_db.COURSE_ID) as gb:
        submission = gb.find_submission_notebook(NB, UNIT, "alice").id
    with formgrader_running(course, tmp_path, launch == "course formgrader") as (url, token, log, server):
        status, body = assignments(url, token, server)
        terminals, _ = get(f"{url}api/terminals", token)
        other_folder, _ = get(f"{url}formgrader?path={handed_in}", token)  # a link in an answer, on any page
        reflected = [  # ids in the URL that nbgrader wrote into its page's HTML and script as they are
            get(f"{url}formgrader/{path}", token)[0]
            for path in (
                'manage_students/x";alert(1);"',
                'gradebook/x";alert(1);"',
                f"gradebook/{UNIT}/x<%2Fli><img src=x onerror=alert(1)>",
            )
        ]
        plain = [
            get(f"{url}formgrader/{path}", token)[0]
            for path in ("manage_students/alice", f"gradebook/{UNIT}/{NB}")
        ]
        _, page = get(f"{url}formgrader/submissions/{submission}/", token)
        _, lab = get(f"{url}lab", token)  # JupyterLab's page: its own scripts, no submission's policy
        files = [  # the link as the page makes it, and a path nbgrader routes to the same file
            get(f"{url}formgrader/submissions/{path}", token)
            for path in (f"{submission}/work.html", f"/{submission}/work.html")
        ]
    logged = log.read_text()
    if launch == "course formgrader":
        assert status == 200 and "not a subdirectory" not in logged
        assert {a["name"]: a["num_submissions"] for a in json.loads(body)}[UNIT] == 3  # the course's students
        # issue 45: no terminals, and a file the student handed in is a download, sandboxed, never a page
        assert terminals == 404
        assert other_folder == 403 and not ran.exists()  # the student's nbgrader_config.py ran here before
        assert reflected == [404, 404, 404] and plain == [200, 200]  # the first three answered 200 before
        # the submission's page: its scripts named by hash, and no ETag (a 304 would carry a policy without them)
        assert "'sha256-" in page["Content-Security-Policy"] and "Etag" not in page
        assert "script-src" not in lab.get("Content-Security-Policy", "")  # the merged matcher took /lab once
        for file_status, file_headers in files:
            assert file_status == 200 and file_headers["Content-Disposition"] == "attachment"
            assert file_headers["Content-Security-Policy"] == "default-src 'none'; sandbox"
            assert file_headers["X-Content-Type-Options"] == "nosniff"
    else:  # formgrader's error page (with status 200) instead of the list
        assert "not a subdirectory of the notebook server root" in logged
        assert UNIT not in body and not body.startswith("[")


def test_the_hub_s_instructor_server_runs_as_course_formgrader(tmp_path):
    """The hub's instructor server (course/hub) reads the same settings from its config: no terminals, a student's
    files as downloads, beside the frame header it had (its browser test starts it: tests/browser/test_hub_browser)."""
    from traitlets.config.loader import PyFileConfigLoader

    from course.grading.formgrader import FILES_AS_DOWNLOADS
    from course.hub.__main__ import INSTRUCTOR_SERVER_CONFIG

    (tmp_path / "jupyter_server_config.py").write_text(INSTRUCTOR_SERVER_CONFIG)
    server = PyFileConfigLoader("jupyter_server_config.py", path=str(tmp_path)).load_config().ServerApp
    assert server.terminals_enabled is False
    assert server.jpserver_extensions == {FILES_AS_DOWNLOADS: True}
    assert server.tornado_settings["headers"]["Content-Security-Policy"] == "frame-ancestors 'self'"


@pytest.mark.parametrize("first", ["course", "nbgrader"])
def test_the_course_s_pages_answer_whichever_extension_loads_first(first):
    """The course's formgrader pages (no ?path=, plain ids, a student's files from submitted/) answer before
    nbgrader's own, also when nbgrader's formgrader loads first: jupyter_server loads extensions by name, so only the
    names' order ("course…" before "nbgrader…") made them win before (the "nbgrader" case failed). No server: a
    tornado application given both extensions' routes, in either order."""
    from types import SimpleNamespace

    from nbgrader.server_extensions.formgrader.formgrader import FormgradeExtension
    from nbgrader.server_extensions.formgrader.handlers import SubmissionHandler, SubmissionNavigationHandler
    from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine
    from tornado.web import Application

    from course.grading import formgrader_files

    app = Application(base_url="/")
    loads = {
        "course": lambda: formgrader_files._load_jupyter_server_extension(SimpleNamespace(web_app=app)),
        "nbgrader": lambda: FormgradeExtension.init_handlers(None, app),  # as nbgrader's extension adds them
    }
    for name in sorted(loads, key=lambda name: name != first):
        loads[name]()

    def page(path: str) -> type:
        request = HTTPServerRequest(
            start_line=RequestStartLine("GET", path, "HTTP/1.1"), headers=HTTPHeaders(Host="localhost")
        )
        return app.find_handler(request).handler_class

    assert page("/formgrader") is formgrader_files.FormgraderOnTheCourse
    assert issubclass(page("/formgrader/gradebook/unit"), formgrader_files.PlainIds)
    for path in ("/formgrader/submissions/abc/work.html", "/formgrader/submissions//abc/work.html"):
        assert page(path) is formgrader_files.SubmittedFiles
    # a submission's page is nbgrader's, sent whole; its links stay nbgrader's
    assert page("/formgrader/submissions/abc/") is formgrader_files.WholeSubmissionPage
    assert issubclass(formgrader_files.WholeSubmissionPage, SubmissionHandler)
    assert page("/formgrader/submissions/abc/next") is SubmissionNavigationHandler


def test_the_submission_page_s_policy_names_only_its_template_s_inline_scripts():
    """formgrader_csp.policy: the hashes of the inline scripts and handlers before the notebook (nbgrader's
    template), none of what follows (where a student's cells are) nor of text that only looks like a handler (a
    student's name, escaped: it was hashed as one), scripts by URL from formgrader's static folder only (not
    'self': a student's .js is on the server's origin); a page without a notebook gets no inline script."""
    from course.grading.formgrader_csp import policy, source_hash

    page = (
        b'<head><script>var id = "x";</script><script src="/formgrader/static/a.js"></script></head>'
        b'<body><span onclick="toggle_name(true);">&lt;img src="x" onerror="named()"&gt;</span>'
        b'<div class="box" id="notebook"><script>steal()</script><img src="x" onerror="steal()"></div></body>'
    )
    static = "http://localhost:8888/formgrader/static/"
    found = policy(page, static).split("; ")
    sources = found[0].split()
    assert sources[:2] == ["script-src", static] and "'self'" not in sources
    assert {source_hash('var id = "x";'), "'unsafe-hashes'", source_hash("toggle_name(true);")} <= set(
        sources
    )
    assert source_hash("steal()") not in sources and source_hash("named()") not in sources
    assert found[1:] == ["object-src 'none'", "base-uri 'none'", "frame-ancestors 'self'"]
    assert "'sha256-" not in policy(page.replace(b'id="notebook"', b'id="elsewhere"'), static)
