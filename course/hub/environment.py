"""The students' Python environment: the course's installed packages (linked, not copied, from the course's
environment) without the `course` package, with the student bundle's `utils`, and nbgrader's student side only
(no formgrader, no create-assignment). It lies in the hub's folder, so students never need to read the checkout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from utils.messages import bilingual

INSTRUCTOR_ONLY = shutil.ignore_patterns("__editable__*", "flash_attention_course*", "__pycache__")
LAB_DISABLED = [
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
]
# JupyterLab's defaults for students: no news pop-up, every cell kept in the page (the browser's find sees all).
LAB_OVERRIDES = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
}
SERVER_EXTENSIONS = {
    "nbgrader.server_extensions.formgrader": False,
    "nbgrader.server_extensions.validate_assignment": True,
    "nbgrader.server_extensions.assignment_list": True,
    "nbgrader.server_extensions.course_list": False,
}


def link_tree(source: Path, dest: Path) -> None:
    """`dest` as a tree of hard links to `source`'s files (copies where they lie on another file system)."""

    def link(src, dst):
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, dest, symlinks=True, copy_function=link, ignore=INSTRUCTOR_ONLY)


def runs_for_others(python: str) -> bool:
    """Whether an account with no rights of its own (nobody) can start `python`."""
    check = subprocess.run(["runuser", "-u", "nobody", "--", python, "-c", "pass"], capture_output=True)
    return check.returncode == 0


def interpreter() -> str:
    """The students' Python: the one under the course's environment where other accounts can run it, else the
    system's Python of the same version (the course's may lie in a private home, e.g. pyenv's under /root)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    base = str(Path(sys._base_executable).resolve())
    for python in (base, shutil.which(version, path="/usr/local/bin:/usr/bin") or ""):
        if python and runs_for_others(python):
            return python
    raise ValueError(
        bilingual(
            f"学生账户无法运行 {base}，系统中也没有 {version}：安装 {version}（如 apt-get install {version}）",
            f"students' accounts cannot run {base} and the system has no {version}: install {version} "
            f"(e.g. apt-get install {version})",
        )
    )


def write_new(path: Path, text: str) -> None:
    """Replace `path` by a new file (never writing through a hard link into the course's environment)."""
    path.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o644)


def build(env: Path, bundle: Path, course_id: str, exchange: Path) -> Path:
    """Make the students' environment at `env` from this interpreter's environment and the bundle folder;
    returns its python."""
    if env.exists():
        shutil.rmtree(env)
    subprocess.run([interpreter(), "-m", "venv", "--without-pip", str(env)], check=True)
    prefix = Path(sys.prefix)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(env)}))
    shutil.rmtree(site)
    link_tree(Path(sysconfig.get_path("purelib")), site)
    shutil.copytree(bundle / "utils", site / "utils", ignore=INSTRUCTOR_ONLY)
    for data in ("share/jupyter", "etc/jupyter"):
        if (prefix / data).is_dir():
            link_tree(prefix / data, env / data)
    config = env / "etc" / "jupyter"
    write_new(
        config / "jupyter_server_config.d" / "nbgrader.json",
        json.dumps({"ServerApp": {"jpserver_extensions": SERVER_EXTENSIONS}}, indent=2),
    )
    write_new(
        config / "labconfig" / "page_config.json",
        json.dumps({"disabledExtensions": {name: True for name in LAB_DISABLED}}, indent=2),
    )
    write_new(config / "nbgrader_config.py", nbgrader_config(course_id, exchange))
    write_new(
        env / "share" / "jupyter" / "lab" / "settings" / "overrides.json", json.dumps(LAB_OVERRIDES, indent=2)
    )
    for folder, _, _ in os.walk(env):
        Path(folder).chmod(0o755)
    return env / "bin" / "python"


def nbgrader_config(course_id: str, exchange: Path) -> str:
    return (
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.course_id = {course_id!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
    )
