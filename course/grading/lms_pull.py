"""`python -m course lms pull --url URL --course ID --assignment ID --unit UNIT`: Canvas's submissions of one
assignment fetched through its REST API into the course folder (`lms/canvas_submissions_<unit>.json`), the file
`course import --times` reads (course/grading/lms_times.py), so no instructor saves it by hand.

`GET /api/v1/courses/<course>/assignments/<assignment>/submissions?include[]=group&per_page=100`, page after page
as Canvas's `Link: <…>; rel="next"` headers lead. The token (Canvas: Account → Settings → New access token) comes
from `$FLASH_CANVAS_TOKEN` or a file only its owner can read (`--token-file`, mode 0600); it is sent only to the
Canvas named by `--url` (a next page elsewhere is refused), only over HTTPS (plain HTTP to this machine alone, for a
test server), never after a redirect, and never printed or written. Any refusal writes nothing.
"""

from __future__ import annotations

import json
import os
import stat
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from course import neutral
from course.grading.atomic import replace_text
from course.layout import Course
from utils.messages import bilingual

TOKEN_ENV = "FLASH_CANVAS_TOKEN"
PER_PAGE = 100
MAX_PAGES = 1000  # 100 000 submissions: a Link header that never ends is refused
MAX_PAGE_BYTES = 64 << 20
TIMEOUT_S = 60
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is answered as the HTTP error it is: urllib would follow it, the token with it, to any host."""

    def redirect_request(self, *args, **kwargs):
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def read_token(token_file: Path | None) -> str:
    """The token from `token_file` (readable by its owner only) or `$FLASH_CANVAS_TOKEN`."""
    if token_file is not None:
        try:
            mode = stat.S_IMODE(token_file.stat().st_mode)
        except OSError:
            raise ValueError(bilingual(f"没有令牌文件 {token_file}", f"no token file {token_file}")) from None
        if mode & 0o077:
            raise ValueError(
                bilingual(
                    f"令牌文件 {token_file} 的权限是 {mode:o}，别人也能读：先运行 chmod 600 {token_file}",
                    f"the token file {token_file} has mode {mode:o}, readable by others: run chmod 600 {token_file}",
                )
            )
        token = token_file.read_text(encoding="utf-8").strip()
    else:
        token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise ValueError(
            bilingual(
                f"没有 Canvas 令牌：设置 ${TOKEN_ENV}，或用 --token-file 给出只有你能读的文件（chmod 600）",
                f"no Canvas token: set ${TOKEN_ENV}, or give a file only you can read (chmod 600) with --token-file",
            )
        )
    return token


def origin(url: str) -> tuple[str, str]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme, parts.netloc


def check_base(url: str) -> str:
    """The Canvas address without a trailing `/`, refused unless HTTPS (or HTTP to this machine)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "https" and not (parts.scheme == "http" and parts.hostname in LOOPBACK):
        raise ValueError(
            bilingual(
                f"--url 必须是 https:// 地址（令牌不能明文发送）：{neutral.visible(url)}",
                f"--url must be an https:// address (the token is never sent in the clear): {neutral.visible(url)}",
            )
        )
    return url.rstrip("/")


def next_page(link: str | None) -> str | None:
    """The `rel="next"` address of a Link header, if any."""
    for part in (link or "").split(","):
        address, _, params = part.partition(";")
        if 'rel="next"' in params.replace(" ", ""):
            return address.strip().strip("<>")
    return None


def fetch(url: str, token: str) -> tuple[list, str | None]:
    """One page: its submissions and the next page's address."""
    request = urllib.request.Request(
        url, headers={"Authorization": f"Bearer {token}", "Accept": "application/json"}
    )
    try:
        with OPENER.open(request, timeout=TIMEOUT_S) as response:
            body = response.read(MAX_PAGE_BYTES + 1)
            link = response.headers.get("Link")
    except urllib.error.HTTPError as error:
        refused = error.code in (401, 403)
        raise ValueError(
            bilingual(
                f"Canvas 答复 {error.code}" + ("：令牌被拒绝或无权查看此作业" if refused else ""),
                f"Canvas answered {error.code}"
                + (": the token was refused or may not see this assignment" if refused else ""),
            )
            + f" ({neutral.visible(url)})"
        ) from None
    except (urllib.error.URLError, OSError) as error:
        raise ValueError(
            bilingual(f"连不上 Canvas：{error}", f"cannot reach Canvas: {error}")
            + f" ({neutral.visible(url)})"
        ) from None
    try:
        if len(body) > MAX_PAGE_BYTES:
            raise ValueError("too large")
        page = json.loads(body)
        if not isinstance(page, list):
            raise ValueError("not a list")
    except ValueError as error:
        raise ValueError(
            bilingual(
                f"Canvas 的答复不是提交的列表（{error}）：检查 --url、--course 与 --assignment",
                f"Canvas's answer is not a list of submissions ({error}): check --url, --course and --assignment",
            )
        ) from None
    return page, next_page(link)


def pull(base: str, course_id: str, assignment: str, token: str) -> list:
    """Every submission of the assignment, page after page, the token sent to `base`'s origin only."""
    for name, value in (("--course", course_id), ("--assignment", assignment)):
        if not value.isdigit():
            raise ValueError(
                bilingual(
                    f"{name} 应是数字 id：{value!r}", f"{name} must be a number (Canvas's id): {value!r}"
                )
            )
    query = urllib.parse.urlencode({"include[]": "group", "per_page": PER_PAGE})
    url: str | None = f"{base}/api/v1/courses/{course_id}/assignments/{assignment}/submissions?{query}"
    found, seen = [], set()
    while url is not None:
        if origin(url) != origin(base) or url in seen or len(seen) >= MAX_PAGES:
            raise ValueError(
                bilingual(
                    f"Canvas 的下一页 {neutral.visible(url)} 不在 {base}，或已读过，或页数超过 {MAX_PAGES}：令牌不会发往那里",
                    f"Canvas's next page {neutral.visible(url)} is not on {base}, or was read already, or the pages "
                    f"pass {MAX_PAGES}: the token is not sent there",
                )
            )
        seen.add(url)
        page, url = fetch(url, token)
        found.extend(page)
    return found


def output_path(course: Course, unit: str) -> Path:
    return course.root / "lms" / f"canvas_submissions_{unit}.json"


def main(course: Course, url: str, course_id: str, assignment: str, unit: str, token_file: str | None) -> int:
    """`python -m course lms pull`: the file written, and how to use it."""
    (unit,) = course.select([unit])
    base = check_base(url)
    submissions = pull(base, course_id, assignment, read_token(Path(token_file) if token_file else None))
    path = output_path(course, unit)
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_text(path, json.dumps(submissions, indent=1))
    handed_in = sum(1 for s in submissions if isinstance(s, dict) and s.get("submitted_at"))
    print(
        bilingual(
            f"Canvas 的 {len(submissions)} 条提交记录（{handed_in} 份已提交）：{path}；"
            f"接着运行 python -m course import <下载的 zip> --unit {unit} --into <文件夹> --times {path}",
            f"Canvas's {len(submissions)} submission records ({handed_in} handed in): {path}; next, python -m course "
            f"import <the downloaded zip> --unit {unit} --into <folder> --times {path}",
        )
    )
    return 0
