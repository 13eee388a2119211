"""`python -m course.hub` (what `bash course.sh hub` runs, as root): set up the hub's folder, accounts, exchange
and the students' environment, then run JupyterHub until Ctrl-C. Running it again reuses the hub's folder
(accounts, passwords, the exchange, JupyterHub's database)."""

from __future__ import annotations

import argparse
import os
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

from course import ROOT, bundle
from course.folder import course_folder
from course.grading import formgrader
from course.hub import accounts, environment
from course.layout import open_course
from utils.messages import bilingual

COURSE_ID = "flash-attention-first-principles"
HUB_ENV = "FLASH_HUB_DIR"
FEEDBACK_ENV = "FLASH_FEEDBACK_SERVICE"  # "1": start the feedback service beside the hub
DEFAULT_HUB_DIR = "/srv/flash-attention-hub"
PROXY = ROOT / "course" / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"

# JupyterHub's servers refuse to be framed at all; JupyterLab shows formgrader in a frame of the instructor's own page.
# And, as `course formgrader`, no terminals and a student's files served as downloads (issue 45).
INSTRUCTOR_SERVER_CONFIG = (
    "c = get_config()  # noqa: F821\n"
    'c.ServerApp.tornado_settings = {"headers": {"Content-Security-Policy": "frame-ancestors \'self\'"}}\n'
    + formgrader.SAFE_CONFIG
)


class HubError(Exception):
    """A reason the hub cannot start, in both languages."""


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="course.sh hub", description=__doc__)
    parser.add_argument(
        "--port",
        type=int,
        default=8000,
        help="浏览器访问的端口（另占用其后两个）/ the port "
        "students open (the next two are the hub's and the proxy's API)",
    )
    parser.add_argument("--ip", default="0.0.0.0", help="监听地址 / the address to listen on")
    parser.add_argument(
        "--hub-dir",
        default=os.environ.get(HUB_ENV, DEFAULT_HUB_DIR),
        help=f"hub 的状态文件夹 / the hub's folder (default ${HUB_ENV} or {DEFAULT_HUB_DIR})",
    )
    parser.add_argument("--course-dir", help="课程文件夹（默认 $FLASH_COURSE_DIR）/ the course folder")
    parser.add_argument(
        "--instructor",
        help="教师的登录名（默认检出的所有者）/ the instructor's login (default: "
        "the checkout's owner, whose Unix account runs the instructor's server)",
    )
    parser.add_argument("--proxy", default=str(PROXY), help="configurable-http-proxy (npm)")
    parser.add_argument(
        "--feedback-service",
        action="store_true",
        default=os.environ.get(FEEDBACK_ENV) == "1",
        help="在 Hub 旁以教师账户运行反馈服务：提交后几分钟内给出预览反馈（指南 8.12）/ run the feedback service "
        f"beside the hub as the instructor: feedback minutes after a submission (guide 8.12; or {FEEDBACK_ENV}=1)",
    )
    parser.add_argument(
        "--reset-password",
        metavar="NAME",
        help="忘记该用户的密码（下次登录时重设）后退出 / "
        "forget NAME's password (they choose a new one at their next login), then exit",
    )
    return parser.parse_args(argv)


def check_ports(ip: str, port: int) -> None:
    for taken in (port, port + 1, port + 2):
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers bind: not TIME_WAIT
            try:
                probe.bind((ip if taken == port else "127.0.0.1", taken))
            except OSError:
                raise HubError(
                    bilingual(
                        f"端口 {taken} 已被占用（hub 使用 {port}–{port + 2}）：用 --port 换一个端口，或停止占用它的程序",
                        f"port {taken} is in use (the hub uses {port}-{port + 2}): pick another with --port or stop "
                        "what holds it",
                    )
                ) from None


def check_proxy(proxy: Path) -> None:
    if not os.access(proxy, os.X_OK):
        raise HubError(
            bilingual(
                f"找不到 configurable-http-proxy（{proxy}）：bash course.sh hub 会用 npm 安装它（需要 node 和 npm）",
                f"no configurable-http-proxy ({proxy}): bash course.sh hub installs it with npm (needs node and npm)",
            )
        )


def roster_students(course_dir: Path) -> list[str]:
    from course.grading.semester import ROSTER_FILE, read_roster

    path = course_dir / ROSTER_FILE
    if not path.is_file():
        raise HubError(
            bilingual(
                f"课程文件夹中没有名单 {path}：写一个 roster.csv，第一列 student_id（每个学生一个登录名）",
                f"no roster in the course folder ({path}): write a roster.csv whose first column is student_id "
                "(each student's login)",
            )
        )
    students = sorted(read_roster(path))
    accounts.check_names(students)
    return students


def close_to_others(folder: Path) -> None:
    """Students must not read the checkout (solutions in source/) or the course folder: no access for others."""
    mode = folder.stat().st_mode
    if mode & 0o007:
        folder.chmod(mode & ~0o007)
        print(
            bilingual(
                f"已关闭其他账户对 {folder} 的访问（chmod o-rwx）",
                f"closed {folder} to other accounts (chmod o-rwx)",
            )
        )


def make_exchange(hub: Path, uid: int, gid: int) -> Path:
    """nbgrader's exchange in the hub's folder: writable by all, as nbgrader requires, but sticky (a student renames
    or removes only what they made), and the course's folder in it made now for the instructor (`uid`, `gid`). A
    student who moved the course's folder aside, or made it first, would receive every classmate's submission."""
    exchange = hub / "exchange"
    exchange.mkdir(exist_ok=True)
    exchange.chmod(0o1777)  # each course's inbound is nbgrader's 0733 (not listable)
    course = exchange / COURSE_ID
    if not os.path.lexists(course):
        course.mkdir(mode=0o755)
        os.chown(course, uid, gid)
    found = os.lstat(course)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != uid:
        raise HubError(
            bilingual(
                f"交换文件夹 {course} 不属于教师（可能是学生建的，里面可能有学生的文件）：检查后删除它，再启动 hub",
                f"the exchange folder {course} does not belong to the instructor (a student may have made it, and "
                "its files may be a student's): check it, remove it, then start the hub again",
            )
        )
    return exchange


def prepare(args: argparse.Namespace) -> dict:
    """Everything the hub needs before JupyterHub starts; returns the settings jupyterhub_config.py reads."""
    if os.geteuid() != 0:
        raise HubError(
            bilingual(
                "hub 需要 root 运行（为每个学生启动各自账户下的服务器）",
                "the hub must run as root (it starts each student's server as that student)",
            )
        )
    check_ports(args.ip, args.port)
    check_proxy(Path(args.proxy))
    course_dir = course_folder(args.course_dir)
    course_dir.mkdir(parents=True, exist_ok=True)
    instructor = args.instructor or accounts.owner_of(ROOT)
    students = roster_students(course_dir)
    if instructor in students:
        raise HubError(
            bilingual(f"教师 {instructor} 也在学生名单中", f"the instructor {instructor} is on the roster")
        )
    hub = Path(args.hub_dir).resolve()
    hub.mkdir(parents=True, exist_ok=True)
    hub.chmod(0o755)  # students reach the exchange and their environment through it; its secrets are 0600
    private = hub / "jupyterhub"
    private.mkdir(mode=0o700, exist_ok=True)
    new = accounts.ensure_students(hub, students)
    if new:
        print(bilingual(f"已创建账户：{', '.join(new)}", f"accounts created: {', '.join(new)}"))
    password = accounts.instructor_password(hub, instructor)
    if password:
        print(
            bilingual(
                f"教师 {instructor} 的初始密码：{password}（也保存在 {hub / accounts.INSTRUCTOR_PASSWORD}，仅 root 可读）",
                f"the instructor {instructor}'s first password: {password} (also in "
                f"{hub / accounts.INSTRUCTOR_PASSWORD}, readable by root only)",
            )
        )
    for folder in (ROOT, course_dir):
        close_to_others(folder)
    uid, gid = os.stat(accounts.home_of(instructor)).st_uid, os.stat(accounts.home_of(instructor)).st_gid
    os.chown(course_dir, uid, gid)
    exchange = make_exchange(hub, uid, gid)
    instructor_config = hub / "instructor-jupyter"
    instructor_config.mkdir(mode=0o700, exist_ok=True)
    os.chown(instructor_config, uid, gid)
    (instructor_config / "nbgrader_config.py").write_text(
        environment.nbgrader_config(COURSE_ID, exchange)
        + f"load_subconfig({str(ROOT / 'nbgrader_config.py')!r})  # noqa: F821 (the course's, from any folder)\n"
    )
    (instructor_config / "jupyter_server_config.py").write_text(INSTRUCTOR_SERVER_CONFIG)
    print(
        bilingual("正在准备学生环境（学生包）…", "preparing the students' environment (the student bundle)…")
    )
    folder, _ = bundle.build(hub / "bundle", open_course(course_dir))
    student_python = environment.build(hub / "student-env", folder, COURSE_ID, exchange)
    return dict(
        hub_dir=str(hub),
        private_dir=str(private),
        ip=args.ip,
        port=args.port,
        proxy=str(Path(args.proxy).resolve()),
        students=students,
        instructor=instructor,
        course_dir=str(course_dir),
        course_python=sys.executable,
        student_python=str(student_python),
        instructor_config=str(instructor_config),
        exchange=str(exchange),
        feedback_service=args.feedback_service,
    )


def feedback_service(settings: dict) -> subprocess.Popen:
    """`python -m course feedback-service` on the hub's exchange, as the instructor (whose `course grade` it is),
    in the course folder; it stops with the hub."""
    home = accounts.home_of(settings["instructor"])
    found = os.stat(home)
    return subprocess.Popen(
        [sys.executable, "-m", "course", "feedback-service", "--exchange", settings["exchange"]]
        + ["--course-id", COURSE_ID],
        cwd=ROOT,
        user=found.st_uid,
        group=found.st_gid,
        extra_groups=[],
        env=dict(
            os.environ, HOME=str(home), USER=settings["instructor"], FLASH_COURSE_DIR=settings["course_dir"]
        ),
    )


def run(settings: dict) -> int:
    """JupyterHub in the foreground; Ctrl-C (or SIGTERM) stops it, and it stops the servers and proxy it started."""
    path = Path(settings["hub_dir"]) / "settings.json"
    accounts.write_private(path, settings)
    config = Path(__file__).with_name("jupyterhub_config.py")
    hub = subprocess.Popen(
        [sys.executable, "-m", "jupyterhub", "-f", str(config)],
        cwd=settings["hub_dir"],
        env=dict(os.environ, FLASH_HUB_SETTINGS=str(path)),
    )
    service = feedback_service(settings) if settings.get("feedback_service") else None

    def stop(*_):
        hub.send_signal(signal.SIGTERM)
        if service is not None:
            service.send_signal(signal.SIGTERM)  # what it was grading waits for its next start

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    print(
        bilingual(
            f"hub 已启动：http://{settings['ip']}:{settings['port']}/ （Ctrl-C 停止）",
            f"the hub is starting: http://{settings['ip']}:{settings['port']}/ (Ctrl-C stops it)",
        ),
        flush=True,
    )
    status = hub.wait()
    if service is not None:
        service.send_signal(signal.SIGTERM)
        service.wait()
    return status


def reset_password(hub: Path, name: str, instructor: str) -> int:
    """Forget `name`'s password: a student chooses a new one at their next login; the instructor gets a new random
    one (never a first-use password)."""
    forgotten = accounts.forget_password(hub, name)
    if name == instructor:
        password = accounts.instructor_password(hub, name)
        print(bilingual(f"教师的新密码：{password}", f"the instructor's new password: {password}"))
    elif forgotten:
        print(bilingual(f"{name} 下次登录时设新密码", f"{name} chooses a new password at their next login"))
    else:
        print(bilingual(f"{name} 还没有密码", f"{name} has no password yet"))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.reset_password:
        return reset_password(
            Path(args.hub_dir), args.reset_password, args.instructor or accounts.owner_of(ROOT)
        )
    try:
        settings = prepare(args)
    except (HubError, ValueError) as error:
        print(error, file=sys.stderr)
        return 2
    return run(settings)


if __name__ == "__main__":
    sys.exit(main())
