"""`python -m course check`: an environment doctor, bilingual, non-zero only for a setup that cannot work; it also
checks the semester's own files (semester.toml and the roster) on their own, before any grading needs them."""

from __future__ import annotations

import importlib.metadata as md
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

from utils.messages import bilingual

OK, WARN, FAIL = "✓", "!", "✗"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def as_tuple(text: str) -> tuple[int, ...]:
    """Leading numeric release parts: '2.13.0+cpu' -> (2, 13, 0), '3.6.0rc1' -> (3, 6, 0)."""
    return tuple(int(re.match(r"\d*", piece).group() or 0) for piece in text.split("+")[0].split(".")[:3])


def known_bad(versions: dict[str, str | None], interpreter: bool) -> list[str]:
    """Warnings for version combinations known to break the course."""
    found = []
    triton, numpy = versions.get("triton"), versions.get("numpy")
    if interpreter and triton and numpy and as_tuple(triton) < (3, 7) and as_tuple(numpy) >= (2, 4):
        found.append(
            bilingual(
                f"Triton {triton} 的解释器与 NumPy {numpy} 不兼容（循环边界出错）：请安装 triton>=3.7 或 numpy<2.4",
                f"Triton {triton}'s interpreter breaks with NumPy {numpy} (loop bounds): "
                "install triton>=3.7 or numpy<2.4",
            )
        )
    if versions.get("nbgrader") and sys.version_info < (3, 11):
        found.append(bilingual("nbgrader 0.9.6 需要 Python >= 3.11", "nbgrader 0.9.6 needs Python >= 3.11"))
    return found


def nbgrader_extensions() -> dict[str, bool] | None:
    """nbgrader's JupyterLab and server extensions, each with whether it is enabled (None: no jupyter)."""
    jupyter = Path(sys.executable).with_name("jupyter")
    if not jupyter.exists():
        return None
    found = {}
    for kind in (["labextension", "list"], ["server", "extension", "list"]):
        out = subprocess.run([str(jupyter), *kind], capture_output=True, text=True, timeout=120)
        for line in ANSI.sub("", out.stdout + out.stderr).splitlines():
            words = line.split()
            if words and "nbgrader" in words[0] and ("enabled" in words or "disabled" in words):
                found[words[0]] = "enabled" in words
    return found


def ray_line() -> str:
    """Whether `course grade --ray` can run here (Ray is an optional extra: the local pool needs none)."""
    found = version("ray")
    if found:
        return f"{OK} " + bilingual(
            f"Ray {found}：可用 --ray 在集群上评分", f"Ray {found}: --ray grades on a cluster"
        )
    return f"{WARN} " + bilingual(
        "未安装 Ray：在本机评分不需要它；集群评分（--ray）请 pip install '.[cluster]'",
        "Ray not installed: grading here needs none; for a cluster (--ray), pip install '.[cluster]'",
    )


def sandbox_line() -> str:
    """Which sandbox grading would use here (a warning when only a fallback or nothing works)."""
    from course.judge import sandbox

    try:
        mechanism, why = sandbox.choose("auto")
    except ValueError as error:
        return f"{WARN} {error}"
    from course.judge import cgroup

    missing, gib, each = cgroup.unavailable(), cgroup.budget() >> 30, cgroup.SANDBOXES_PER_JOB
    zh = f"所有评分共用 {gib} GiB 内存，每次评分一个 cgroup，上限为其中 1/({each}×同时评分数)"
    en = f"gradings share {gib} GiB of memory, each in a cgroup of 1/({each} × jobs at once) of it"
    zh, en = (zh, en) if not missing else (f"没有按评分的内存上限：{missing}", f"no memory cgroup: {missing}")
    size = sandbox.TMPFS_BYTES >> 30
    disk = sandbox.workspaces_bounded()
    zh += f"；工作副本在 {size} GiB 的 tmpfs 上" if disk else "；工作副本在主机磁盘上，只由每 2 秒的检查限制"
    en += (
        f"; working copies on a {size} GiB tmpfs"
        if disk
        else "; working copies on the host's disk, bounded by the 2 s watch alone"
    )
    mark = OK if mechanism == "bubblewrap" and not missing and disk else WARN
    return f"{mark} " + bilingual(
        f"评分沙箱：{mechanism}（{why}）；{zh}", f"grading sandbox: {mechanism} ({why}); {en}"
    )


def tables_line() -> str:
    """Whether the host's file and pid tables hold every grading's limits at one job per core (`course.judge.tables`)."""
    from course.judge import sandbox, tables

    fits, said = tables.line(os.cpu_count() or 1, sandbox.LIMITS)
    return f"{OK if fits else WARN} {said}"


def settings_lines(course, roster: Path | None) -> tuple[list[str], bool]:
    """A line per semester file (semester.toml, the roster: `roster`, else the course root's roster.csv if there
    is one) and for the private overlay's judges, with what is wrong in it, and whether anything is."""
    from course.grading import overlay, semester

    checks = [
        (semester.semester_path(course), lambda path: semester.load_policy(path, course)),
        (roster or course.root / "roster.csv", semester.read_roster),
    ]
    lines, fatal = [], False
    for path, check in checks:
        if not path.is_file() and path != roster:
            continue  # none (no due dates, no LMS export yet), unless the roster was named
        try:
            check(path)
        except ValueError as error:
            lines.append(f"{FAIL} {error}")
            fatal = True
        else:
            lines.append(f"{OK} " + bilingual(f"{path} 无误", f"{path} is valid"))
    try:
        judged = overlay.check()
    except ValueError as error:  # a missing folder, or a judge module that fails to load
        return [*lines, f"{FAIL} {error}"], True
    if judged:
        lines.append(f"{OK} " + bilingual(f"覆盖层的评审：{judged}", f"the overlay's judges: {judged}"))
    return lines, fatal


def folder_lines(course) -> tuple[list[str], bool]:
    """Where the course folder is, whether `git clean -xfd` would delete it, and whether the checkout still holds
    a semester's files of the earlier layout (fatal: grading would start a second gradebook)."""
    from course import layout

    lines = [f"{OK} " + bilingual(f"课程文件夹：{course.root}", f"course folder: {course.root}")]
    if layout.inside_checkout(course):
        lines.append(
            f"{WARN} "
            + bilingual(
                "课程文件夹在检出目录之内：`git clean -xfd` 会删掉本学期的提交、成绩簿和盐；请用检出目录之外的 "
                "--course-dir 或 FLASH_COURSE_DIR",
                "the course folder is inside the checkout: `git clean -xfd` would delete the semester's "
                "submissions, gradebook and salt; choose one outside it with --course-dir or FLASH_COURSE_DIR",
            )
        )
    try:
        layout.refuse_old_state(course)
    except ValueError as error:
        lines.append(f"{FAIL} {error}")
        return lines, True
    return lines, False


def main(course=None, roster: Path | None = None) -> int:
    """The environment, then (for `course`) its semester files."""
    import utils

    mode = utils.mode()
    fatal = False
    print(bilingual("FlashAttention 课程环境检查", "FlashAttention course environment check"))
    where = mode.name if mode.is_gpu else bilingual("CPU（Triton 解释器）", "CPU (Triton interpreter)")
    print(f"  {OK} {bilingual('运行模式', 'mode')}: {where}")
    versions = {"python": platform.python_version()}
    for dist in ("torch", "triton", "numpy", "nbgrader", "jupyterlab", "notebook", "matplotlib"):
        versions[dist] = version(dist)
    for dist, ver in versions.items():
        required = dist in ("torch", "triton", "numpy")
        mark = OK if ver else (FAIL if required else WARN)
        fatal |= required and not ver
        print(f"  {mark} {dist:<11} {ver or bilingual('未安装', 'not installed')}")
    for warning in known_bad(versions, mode.interpreter):
        print(f"  {WARN} {warning}")
    from utils.plotting import cjk_font

    font = cjk_font()
    print(
        f"  {OK if font else WARN} "
        + (
            bilingual(f"中文字体：{font}", f"CJK font: {font}")
            if font
            else bilingual(
                "没有中文字体（系统没有，PyPI 的 noto-cjk-sans-otc 也没装），图中标签只显示英文：重新运行 bash course.sh",
                "no CJK font (none on the system, and PyPI's noto-cjk-sans-otc is missing): plot labels fall back to "
                "English; run bash course.sh again",
            )
        )
    )
    print(f"  {sandbox_line()}")
    print(f"  {tables_line()}")
    print(f"  {ray_line()}")
    extensions = nbgrader_extensions()
    if extensions is None:
        print(f"  {WARN} " + bilingual("找不到 jupyter 命令", "jupyter command not found"))
    elif not extensions:
        print(
            f"  {WARN} "
            + bilingual("未找到 nbgrader 的 JupyterLab 扩展", "nbgrader JupyterLab extensions not found")
        )
    else:
        enabled = [n for n, on in extensions.items() if on]
        mark = OK if len(enabled) == len(extensions) else WARN
        print(
            f"  {mark} "
            + bilingual(
                f"nbgrader 扩展已启用 {len(enabled)}/{len(extensions)}",
                f"nbgrader extensions enabled {len(enabled)}/{len(extensions)}",
            )
        )
    if course is not None:
        for check in (folder_lines(course), settings_lines(course, roster)):
            lines, wrong = check
            for line in lines:
                print(f"  {line}")
            fatal |= wrong
    print(
        bilingual("环境无法使用", "setup cannot work") if fatal else bilingual("环境可用", "setup is usable")
    )
    return 1 if fatal else 0
