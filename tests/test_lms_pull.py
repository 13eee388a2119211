"""`course lms pull` (issue 46 item 1): Canvas's submissions JSON fetched through its REST API, page after page by
its Link headers, from a fake Canvas on this machine the test starts (never the internet); the token from the
environment or a 0600 file, sent to that Canvas alone and never printed or written. Each refusal writes nothing."""

import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT

from course import cli
from course.grading import lms_pull, lms_times
from course.layout import Course

RECORDS = Path(__file__).resolve().parent / "fixtures" / "lms" / "canvas_submissions.json"  # made-up students
TOKEN = "7~secretCanvasToken0123456789"
PATH = "/api/v1/courses/77/assignments/4242/submissions"


class FakeCanvas:
    """An HTTP server on 127.0.0.1 answering the submissions endpoint one record a page, each page's Link header
    naming the next (`next_to`: where the last page's "next" points instead, as a hostile answer would); it keeps
    every request's path and Authorization header."""

    def __init__(
        self, status: int = 200, body: bytes | None = None, next_to: str | None = None, redirect: str = ""
    ):
        self.records = json.loads(RECORDS.read_text(encoding="utf-8"))
        self.requests: list[tuple[str, str]] = []
        canvas = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                canvas.requests.append((self.path, self.headers.get("Authorization", "")))
                if redirect:
                    self.send_response(302)
                    self.send_header("Location", redirect + self.path)
                    return self.end_headers()
                path, _, query = self.path.partition("?")
                page = int(urllib.parse.parse_qs(query).get("page", ["1"])[0])
                if path != PATH or self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    return self.answer(401, b'{"errors":[{"message":"Invalid access token."}]}')
                link = f'<{canvas.url}{PATH}?page=1&per_page=1>; rel="first"'
                if page < len(canvas.records):
                    link += f',<{canvas.url}{PATH}?page={page + 1}&per_page=1>; rel="next"'
                elif next_to:
                    link += f',<{next_to}{PATH}?page=1>; rel="next"'
                self.answer(status, body or json.dumps(canvas.records[page - 1 : page]).encode(), link)

            def answer(self, code: int, data: bytes, link: str = "") -> None:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                if link:
                    self.send_header("Link", link)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def canvas():
    server = FakeCanvas()
    yield server
    server.close()


@pytest.fixture
def course(tmp_path, monkeypatch) -> Course:
    course = Course(tmp_path / "course", FIXTURE_COURSE.wrong, code=FIXTURE)
    course.root.mkdir()
    monkeypatch.setattr(cli, "_course", lambda *a, **k: course)
    return course


def pull(course: Course, url: str, token_file: Path | None = None) -> int:
    return lms_pull.main(course, url, "77", "4242", "01", str(token_file) if token_file else None)


def test_every_page_is_fetched_into_the_course_folder_for_import_times(course, canvas, monkeypatch, capsys):
    monkeypatch.setenv(lms_pull.TOKEN_ENV, TOKEN)
    assert pull(course, canvas.url + "/") == 0
    path = lms_pull.output_path(course, UNIT)
    assert json.loads(path.read_text(encoding="utf-8")) == canvas.records  # three pages of one record
    assert [p.split("?")[1] for p, _ in canvas.requests] == [
        "include%5B%5D=group&per_page=100",
        "page=2&per_page=1",
        "page=3&per_page=1",
    ]
    times = lms_times.read_times(path, "canvas", None)  # what `course import --times` reads
    assert sorted(times) == ["101", "102"] and times["101"].isoformat() == "2026-03-07T04:12:31+00:00"
    out = capsys.readouterr().out
    assert "3 submission records (2 handed in)" in out and f"--times {path}" in out
    assert TOKEN not in out and TOKEN not in path.read_text(encoding="utf-8")


def test_a_token_file_must_be_private(course, canvas, tmp_path, monkeypatch):
    monkeypatch.delenv(lms_pull.TOKEN_ENV, raising=False)
    token = tmp_path / "canvas-token"
    token.write_text(TOKEN + "\n", encoding="utf-8")
    token.chmod(0o644)
    with pytest.raises(ValueError, match="mode 644, readable by others: run chmod 600"):
        pull(course, canvas.url, token)
    assert canvas.requests == []
    token.chmod(0o600)
    assert pull(course, canvas.url, token) == 0
    assert {auth for _, auth in canvas.requests} == {f"Bearer {TOKEN}"}
    with pytest.raises(ValueError, match=f"no Canvas token: set \\${lms_pull.TOKEN_ENV}"):
        pull(course, canvas.url)


@pytest.mark.parametrize(
    ("hostile", "said", "asked"),
    [
        ("next_to", "is not on .*the token is not sent there", 3),  # the last page's next is elsewhere
        ("redirect", "answered 302", 1),  # urllib followed a redirect with the Authorization header
    ],
)
def test_the_token_goes_to_the_named_canvas_only(course, monkeypatch, hostile, said, asked):
    """Attacks: a next page on another host (here another port), a redirect there. Before the origin check and
    before redirects were refused, the token was sent there; now the pull is refused, the other server sees
    nothing and nothing is written."""
    monkeypatch.setenv(lms_pull.TOKEN_ENV, TOKEN)
    elsewhere = FakeCanvas()
    canvas = FakeCanvas(**{hostile: elsewhere.url})
    try:
        with pytest.raises(ValueError, match=said):
            pull(course, canvas.url)
        assert elsewhere.requests == [] and len(canvas.requests) == asked
    finally:
        canvas.close()
        elsewhere.close()
    assert not lms_pull.output_path(course, UNIT).exists()
    with pytest.raises(ValueError, match="must be an https:// address"):
        pull(course, "http://canvas.example.edu")  # the token in the clear: refused before any request


@pytest.mark.parametrize(
    ("status", "body", "said"),
    [
        (401, None, "answered 401: the token was refused"),
        (200, b'{"errors": []}', "not a list of submissions"),
        (200, b"<html>login</html>", "not a list of submissions"),
    ],
)
def test_a_refusal_or_a_wrong_answer_writes_nothing(course, monkeypatch, capsys, status, body, said):
    monkeypatch.setenv(lms_pull.TOKEN_ENV, TOKEN if status == 200 else "wrong-token")
    canvas = FakeCanvas(status, body)
    try:
        argv = ["lms", "pull", "--url", canvas.url, "--course", "77", "--assignment", "4242", "--unit", "01"]
        assert cli.main(argv) == 2
    finally:
        canvas.close()
    out = capsys.readouterr().out
    assert said in out and " / " in out and TOKEN not in out and "wrong-token" not in out
    assert not lms_pull.output_path(course, UNIT).exists()
