"""Where a student's code runs while it is judged: a working copy that holds only what a student has.

Mechanism "namespaces" (util-linux `unshare` + `course.judge.enter`): new mount, PID and network namespaces;
the course folder, the nbgrader course root and the temp folder (other graders' scratch, gradebook copies)
are covered by empty tmpfs mounts; only the Python environment and the working copy are bound back; the
process runs as `nobody` with no network and sees no other process. Mechanism "none" runs the same command
directly (`course grade --no-sandbox`, or where namespaces are unavailable; the grades CSV says which ran).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import site
import subprocess
import sys
import tempfile
from pathlib import Path

from course import ROOT

MECHANISMS = ("namespaces", "none")
PASSED_ENV = (
    "TRITON_INTERPRET",
    "FLASH_COURSE_DEVICE",
    "OMP_NUM_THREADS",
    "CUDA_VISIBLE_DEVICES",
    "LD_LIBRARY_PATH",
    "LANG",
    "LC_ALL",
)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _outermost(paths: list[Path]) -> list[Path]:
    unique = sorted(set(paths), key=lambda p: len(p.parts))
    return [p for i, p in enumerate(unique) if not any(_inside(p, q) for q in unique[:i])]


def hidden_paths(extra: list[Path] = ()) -> list[Path]:
    """The folders covered by an empty tmpfs: the course, the temp folder, the grader's home folder and any
    `extra` course root."""
    home = [Path.home().resolve()] if Path.home().resolve() != Path("/") else []
    return _outermost([ROOT, temp_folder(), *home, *(Path(p).resolve() for p in extra)])


def temp_folder() -> Path:
    return Path(tempfile.gettempdir()).resolve()


def python_paths() -> list[Path]:
    """The environment the child needs: the interpreter's prefixes, its site-packages and the PYTHONPATH
    folders outside the course (e.g. a `pip install --target` folder on a GPU box)."""
    entries = [sys.prefix, sys.base_prefix, *site.getsitepackages()]
    entries += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    found = [Path(p).resolve() for p in entries if Path(p).is_dir()]
    prefix = Path(sys.prefix).resolve()
    return [p for p in found if not _inside(p, ROOT) or _inside(p, prefix)]


def kept_paths(hidden: list[Path], workdir: Path, shared: Path | None = None) -> list[Path]:
    """What is bound back under the hidden folders: the parts of the environment there, the work folder and a
    shared folder."""
    keep = [p for p in python_paths() if any(_inside(p, h) and p != h for h in hidden)]
    return _outermost([*keep, workdir.resolve(), *([shared.resolve()] if shared else [])])


def child_env(workdir: Path, home: Path, triton_cache: Path | None = None) -> dict[str, str]:
    """A small environment: no secrets of the grader's, the student utils first on the path; Triton's cache in
    `triton_cache` when given (shared by one student's processes), else in the home folder."""
    env = {key: os.environ[key] for key in PASSED_ENV if key in os.environ}
    extra = [
        p
        for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if p and not _inside(Path(p).resolve(), ROOT)
    ]
    env.update(
        PATH=os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        HOME=str(home),
        TMPDIR=tempfile.gettempdir(),
        PYTHONPATH=os.pathsep.join([str(workdir), *extra]),
        PYTHONNOUSERSITE="1",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONUNBUFFERED="1",
        TRITON_CACHE_DIR=str(triton_cache or home / ".triton"),
        MPLCONFIGDIR=str(home / ".matplotlib"),
        TQDM_DISABLE="1",
    )
    return env


def shared_folder(prefix: str) -> Path:
    """A folder that several sandboxed processes of one student write (e.g. their Triton cache)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o777)
    return folder


def workspace(prefix: str = "course-judge-") -> Path:
    """A fresh working copy: the student-facing `utils` (read-only for the child) and a writable `home`."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    shutil.copytree(ROOT / "utils", work / "utils", ignore=shutil.ignore_patterns("__pycache__"))
    for folder in ("home", "out"):
        (work / folder).mkdir()
        (work / folder).chmod(0o777)
    work.chmod(0o755)
    return work


def command(
    argv: list[str],
    workdir: Path,
    mechanism: str,
    extra_hidden: list[Path] = (),
    cwd: Path | None = None,
    triton_cache: Path | None = None,
) -> tuple[list[str], dict]:
    """(command, environment) that runs `argv` under `mechanism` with the working copy `workdir`, in `cwd`
    (default: the working copy), writing Triton's cache to `triton_cache` if given."""
    env = child_env(workdir, workdir / "home", triton_cache)
    if mechanism == "none":
        return argv, env
    hidden = hidden_paths(list(extra_hidden))
    privileged = os.geteuid() == 0
    spec = {
        "hide": {str(p): "1777" if p == temp_folder() else "755" for p in hidden},
        "keep": [str(p) for p in kept_paths(hidden, workdir, triton_cache)],
        "argv": argv,
        "env": env,
        "cwd": str(cwd or workdir),
        "privileged": privileged,
    }
    spec_path = workdir / "sandbox.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    unshare = ["unshare", "--mount", "--net", "--pid", "--fork", "--kill-child"]
    if not privileged:
        unshare += ["--user", "--map-root-user"]
    launcher_env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return [*unshare, sys.executable, "-m", "course.judge.enter", str(spec_path)], launcher_env


PROBE = "import os, sys; print(os.path.exists(sys.argv[1]), os.getuid())"


@functools.cache
def probe() -> tuple[str, str]:
    """(mechanism, why): "namespaces" when a sandboxed child cannot see the course, else "none"."""
    if shutil.which("unshare") is None or sys.platform != "linux":
        return "none", "unshare (util-linux) not found"
    work = workspace("course-probe-")
    try:
        argv, env = command([sys.executable, "-c", PROBE, str(ROOT / "course")], work, "namespaces")
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return "none", f"unshare failed: {error}"
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if done.returncode != 0 or not done.stdout.startswith("False"):
        return "none", f"unshare failed: {(done.stderr or done.stdout).strip()[-300:]}"
    return "namespaces", "course hidden, no network, own PID namespace, unprivileged user"


def choose(requested: str) -> tuple[str, str]:
    """The mechanism to use for `requested` ("auto", "namespaces" or "none"); "namespaces" must work."""
    if requested == "none":
        return "none", "opted out (--no-sandbox)"
    mechanism, why = probe()
    if requested == "namespaces" and mechanism != "namespaces":
        raise RuntimeError(f"sandbox 'namespaces' unavailable: {why}")
    return mechanism, why
