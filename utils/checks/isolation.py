"""Run a graded check of student kernels in a separate process, so a crash fails only that check.

A Triton kernel that reads out of bounds can kill the interpreter (segfault) or poison the CUDA
context; either would take the whole notebook down with it. `run_check` instead:

1. writes the student's module as grading builds it (`utils.judged.student_module`: the unit's preamble and the
   imports, definitions and assignments of its student cells as the kernel last ran them, nothing else of
   the notebook) into a real file: on a GPU `@triton.jit` reads its kernel's source. A name that module
   reads but that will not exist when graded fails the check before anything runs;
2. runs `python -m utils.checks.isolation` on it with a timeout (the child inherits the environment,
   so `TRITON_INTERPRET` and `FLASH_COURSE_DEVICE` carry over); on a Linux CPU that child is forked from a
   template process that imported torch and Triton once for this kernel (`_Template`), not started afresh;
3. turns a crash, a timeout or an exception in the child into an `AssertionError` with a
   bilingual message. The child's output is echoed to stdout; nothing is ever written to stderr.

`export_module` is for the course's own code, not graded code: it writes a module that defines some objects of
the notebook and everything of the notebook they use (the traffic counter runs a notebook's kernel that way).
"""

from __future__ import annotations

import ast
import atexit
import builtins
import contextlib
import importlib
import importlib.util
import json
import linecache
import os
import select
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import traceback
import types
from pathlib import Path

from utils.judged.student_module import MODULE_NAME, checked_source, kept_statements, source_file
from utils.messages import bilingual
from utils.runtime import BANNER_SHOWN

_LITERALS = (int, float, str, bool, type(None))
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
TEMPLATE_ARGV = [sys.executable, "-m", "utils.checks.isolation", "--template"]  # `_Template`'s process
TEMPLATE_START_LIMIT = 60.0  # seconds for the template to fork a child (its imports come first, once)


class IsolatedCheckError(AssertionError):
    """A check that failed, crashed or timed out in its child process."""


def _literal(value) -> bool:
    if isinstance(value, _LITERALS):
        return True
    if isinstance(value, tuple | list):
        return all(_literal(v) for v in value)
    return False


def _defined_names(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return {node.name}


def _loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _free_names(node: ast.stmt) -> set[str]:
    """Names a top-level statement reads from the module (a function's own locals excluded)."""
    if isinstance(node, ast.ClassDef):
        outer = [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
        return set().union(*map(_loads, outer), *map(_free_names, node.body))
    if not isinstance(node, _FUNCTIONS):
        return _loads(node)
    arguments = node.args
    params = [
        *arguments.posonlyargs,
        *arguments.args,
        *arguments.kwonlyargs,
        arguments.vararg,
        arguments.kwarg,
    ]
    local = {a.arg for a in params if a is not None}
    local |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    outer = [*node.decorator_list, *arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
    outer += [a.annotation for a in params if a is not None and a.annotation is not None]
    inner = set().union(*(_loads(statement) for statement in node.body)) - local
    return inner | set().union(*map(_loads, outer))


def _import_line(name: str, value) -> str | None:
    """An import statement that recreates `name` in a fresh process, or None if there is none."""
    if isinstance(value, types.ModuleType):
        module = value.__name__
        if name == module:
            return f"import {module}"
        parent, _, leaf = module.rpartition(".")
        return f"from {parent} import {leaf} as {name}" if parent else f"import {module} as {name}"
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", "")
    if module and module != "__main__" and qualname and "." not in qualname and "<" not in qualname:
        try:
            if getattr(importlib.import_module(module), qualname, None) is value:
                return f"from {module} import {qualname} as {name}"
        except ImportError:
            return None
    return None


def _select(statements: list[tuple[ast.stmt, str]]) -> tuple[list[tuple[ast.stmt, str]], set[str]]:
    """Imports and definitions, plus the assignments they need; and the names still undefined."""
    chosen = [s for s in statements if not isinstance(s[0], ast.Assign | ast.AnnAssign)]
    while True:
        needed = set().union(*(_free_names(node) for node, _ in chosen))
        extra = [
            s
            for s in statements
            if s not in chosen
            and isinstance(s[0], ast.Assign | ast.AnnAssign)
            and _defined_names(s[0]) & needed
        ]
        if not extra:
            break
        chosen += extra
    chosen.sort(key=statements.index)
    defined = set().union(*(_defined_names(node) for node, _ in chosen))
    return chosen, needed - defined - set(dir(builtins))


def module_source(objects, namespace: dict | None = None) -> str:
    """Python source of a module that defines `objects` and everything of the notebook they use.

    `namespace` is where the objects live (default: the notebook's `__main__`). The cells defining the
    objects contribute their imports and definitions, and the assignments those read (a demo call
    in such a cell is left out). Names still undefined are resolved in `namespace`: modules and
    importable objects become imports, simple literals become assignments, and functions, classes
    and kernels defined in another cell bring that cell in too.
    """
    namespace = vars(sys.modules["__main__"]) if namespace is None else namespace
    missing = [getattr(o, "__name__", repr(o)) for o in objects if source_file(o) is None]
    if missing:
        raise ValueError(
            bilingual(f"找不到这些对象的源代码：{missing}", f"cannot find the source code of {missing}")
        )
    files: list[str] = []
    pending = [source_file(o) for o in objects]
    statements: list[tuple[ast.stmt, str]] = []
    preamble: dict[str, str] = {}
    while pending:
        filename = pending.pop(0)
        if filename in files:
            continue
        files.append(filename)
        statements += kept_statements("".join(linecache.getlines(filename)), filename)
        chosen, undefined = _select(statements)
        for name in sorted(undefined - set(preamble)):
            value = namespace.get(name)
            line = _import_line(name, value) if name in namespace else None
            defining_cell = source_file(value) if name in namespace and line is None else None
            if line is not None:
                preamble[name] = line
            elif defining_cell is not None:
                pending.append(defining_cell)
            elif name in namespace and _literal(value):
                preamble[name] = f"{name} = {value!r}"
    chosen, _ = _select(statements)
    parts = ["import utils  # first: decides between the GPU and Triton's interpreter\n"]
    parts += [line + "\n" for line in preamble.values()]
    parts += ["\n\n" + text.rstrip() + "\n" for _, text in chosen]
    return "".join(parts)


def export_module(objects, path, namespace: dict | None = None) -> Path:
    """Write `module_source(objects, namespace)` to `path` and return the path."""
    path = Path(path)
    path.write_text(module_source(objects, namespace), encoding="utf-8")
    return path


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return "unknown signal"


def _tail(text: str, lines: int = 12) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def run_check(check: str, notebook: str, timeout: float = 300, namespace: dict | None = None, **kwargs):
    """Run `check(module, **kwargs)` in a child process on the student's module of `notebook` (built from the
    cells of `namespace`, default the notebook's).

    `check` names a function as "package.module:function"; `kwargs` must be JSON-serialisable.
    Returns what the check returned (JSON round-trip). Raises `AssertionError` when the check
    fails, the child crashes, or it runs longer than `timeout` seconds, or when the module reads a name
    that will not exist when graded.
    """
    source = checked_source(notebook, namespace)
    with tempfile.TemporaryDirectory(prefix="isolated_check_") as folder:
        module_path = Path(folder) / f"{MODULE_NAME}.py"
        module_path.write_text(source, encoding="utf-8")
        return check_module(check, module_path, timeout, **kwargs)


def check_module(check: str, module_path, timeout: float = 300, **kwargs):
    """`run_check` on a module file that already exists (e.g. one the judge built from a notebook)."""
    with tempfile.TemporaryDirectory(prefix="isolated_result_") as folder:
        result_path = Path(folder) / "result.json"
        arguments = [str(module_path), check, json.dumps(kwargs), str(result_path)]
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])  # the folder that holds `utils`
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        env[BANNER_SHOWN] = "1"  # the notebook showed the CPU banner once; the child stays quiet
        out, err, code = _run_child(arguments, env, timeout, Path(folder))
        print(out, end="")
        if code is None:
            raise IsolatedCheckError(
                bilingual(
                    f"检查 {check} 超时（{timeout:g} 秒后终止）：内核可能陷入死循环或过慢",
                    f"check {check} timed out (stopped after {timeout:g} s): "
                    "a kernel may loop forever or be far too slow",
                )
            )
        result = _read_result(result_path)
        if code != 0 or result is None:
            # No result, a partial one, or a process that died after writing it (e.g. while exiting, from
            # memory a kernel overwrote): all the same crash, whatever the timing.
            how = f"{code}, {_signal_name(code)}" if code < 0 else str(code)
            raise IsolatedCheckError(
                bilingual(
                    f"内核崩溃（退出码 {how}），常见原因：越界读写（缺少掩码）",
                    f"kernel crashed (exit {how}); a common cause is an out-of-bounds access (missing mask)",
                )
                + "\n"
                + _tail(err)
            )
    if not result["ok"]:
        raise IsolatedCheckError(f"{result['error']}\n{result['where']}".rstrip())
    return result["value"]


def _run_child(arguments: list[str], env: dict, timeout: float, folder: Path) -> tuple[str, str, int | None]:
    """(stdout, stderr, exit code or None after a timeout) of the child on `arguments`: forked from the template
    where there is one (`_Template`), else a fresh `python -m utils.checks.isolation`, in its own session."""
    template = _Template.for_env(env)
    if template is not None and (ended := template.run(arguments, timeout, folder)) is not None:
        return ended
    child = subprocess.Popen(
        [sys.executable, "-m", "utils.checks.isolation", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        out, err = child.communicate()
        return out, err, None
    return out, err, child.returncode


class _Template:
    """A process that imported `utils` (torch, Triton) once, from which each check's child is forked: the child is
    what `python -m utils.checks.isolation` would be, less the seconds of those imports (issue 50: three to six
    self-check children a Triton notebook, each importing torch). It never runs a student's code itself, and belongs
    to the kernel that started it (one per kernel, in its sandbox when graded). On Linux and without a GPU only (CUDA
    is not forked); a new one when the environment or the folder changed, and none after it failed once."""

    running: _Template | None = None
    failed = False
    lock = threading.Lock()

    def __init__(self, env: dict, cwd: str):
        self.key = (sorted(env.items()), cwd)
        self.process = subprocess.Popen(
            TEMPLATE_ARGV,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        self.pending = b""

    @classmethod
    def for_env(cls, env: dict) -> _Template | None:
        if sys.platform != "linux" or cls.failed or _on_gpu():
            return None
        with cls.lock:
            key = (sorted(env.items()), os.getcwd())
            if cls.running is not None and (cls.running.key != key or cls.running.process.poll() is not None):
                cls.running.stop()
                cls.running = None
            if cls.running is None:
                cls.running = cls(env, os.getcwd())
            return cls.running

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def line(self, deadline: float | None) -> dict | None:
        """The template's next JSON line, or None at `deadline` or when it has ended."""
        while b"\n" not in self.pending:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self.process.stdout], [], [], wait)[0]:
                return None
            chunk = os.read(self.process.stdout.fileno(), 4096)
            if not chunk:
                return None
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def run(self, arguments: list[str], timeout: float, folder: Path) -> tuple[str, str, int | None] | None:
        """(stdout, stderr, exit code or None after a timeout) of a child forked for `arguments`; None when the
        template cannot fork one (it is then given up for this kernel: the caller starts a fresh process)."""
        out, err = folder / "stdout", folder / "stderr"
        request = {"arguments": arguments, "stdout": str(out), "stderr": str(err), "cwd": os.getcwd()}
        with _Template.lock:
            try:
                self.process.stdin.write((json.dumps(request) + "\n").encode())
                self.process.stdin.flush()
                started = self.line(time.monotonic() + TEMPLATE_START_LIMIT)
            except (OSError, ValueError):
                started = None
            if started is None:
                _Template.failed = True
                self.stop()
                return None
            ended = self.line(time.monotonic() + timeout)
            if ended is None:  # past its time: the child's session killed, the template reports its end
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(started["pid"], signal.SIGKILL)
                self.line(None)
            return _text(out), _text(err), None if ended is None else ended["code"]


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def _on_gpu() -> bool:
    from utils.runtime import mode

    return mode().is_gpu


def _template() -> None:
    """The template's loop: import what every check's child imports, then fork one child per request line (its
    output to the request's files, in a session of its own) and report its pid and then its exit code."""
    import triton  # noqa: F401

    import utils  # noqa: F401  (decides the device before triton is used)

    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if (
            pid == 0
        ):  # the child ends here: its exit functions run, not the interpreter's slow teardown of torch
            code = _forked(request)
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        print(json.dumps({"pid": pid}), flush=True)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"code": os.waitstatus_to_exitcode(status)}), flush=True)


def _forked(request: dict) -> int:
    """The forked child: `python -m utils.checks.isolation ARGUMENTS` from here on; its exit code."""
    os.setsid()
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.chdir(request["cwd"])
    sys.argv = [__file__, *request["arguments"]]
    try:
        _child(*request["arguments"])
    except SystemExit as leaving:  # the check's sys.exit(n): n, as a process
        return leaving.code if isinstance(leaving.code, int) else 0 if leaving.code is None else 1
    except BaseException:  # noqa: BLE001 (what a fresh process would print before exiting 1)
        traceback.print_exc()
        return 1
    return 0


def _read_result(path: Path) -> dict | None:
    """The child's result, or None when it is missing, empty, partial or malformed."""
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(result, dict) or "ok" not in result:
        return None
    if result["ok"]:
        return result if "value" in result else None
    return result if {"error", "where"} <= result.keys() else None


def _resolve(check: str):
    module_name, _, function_name = check.partition(":")
    return getattr(importlib.import_module(module_name), function_name)


def load_student_module(path) -> types.ModuleType:
    """Import the student's module file as `student_code` (the name tracebacks are matched on)."""
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE_NAME] = module
    spec.loader.exec_module(module)
    return module


def student_frames(error: BaseException) -> str:
    """The traceback lines that point into the student's code (where to look), indented."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if MODULE_NAME in f.filename]
    return textwrap.indent("".join(traceback.format_list(frames[-3:])), "  ")


NAME_HINT = bilingual(
    "评分时只有本单元的前置代码和各解答单元格中的定义：笔记本其他单元格里的名字不存在，请把辅助函数放进解答单元格内",
    "when graded only this unit's preamble and the definitions of the solution cells exist: names from other "
    "cells of the notebook do not, so put helpers inside the solution cell",
)


def failure_record(error: BaseException, limit: int = 3000) -> dict:
    """{ok: False, error, where} for a failure: its message (for a `NameError`, where helpers go) and the
    traceback lines in the student's code."""
    message = str(error) if isinstance(error, AssertionError) else f"{type(error).__name__}: {error}"
    if isinstance(error, NameError):
        message += f"\n{NAME_HINT}"
    return {"ok": False, "error": message[:limit], "where": student_frames(error)[:limit]}


def _child(module_path: str, check: str, kwargs_json: str, result_path: str) -> None:
    """Entry point of the child process: run the check and write {ok, value | error} as JSON."""
    import utils  # noqa: F401  (decides the device before triton is imported)

    try:
        module = load_student_module(module_path)
        value = _resolve(check)(module, **json.loads(kwargs_json))
        result = {"ok": True, "value": value}
    except Exception as error:  # every failure becomes a graded AssertionError in the parent
        result = failure_record(error)
    sys.stdout.flush()
    partial = Path(f"{result_path}.partial")
    partial.write_text(json.dumps(result), encoding="utf-8")
    partial.replace(result_path)  # atomic: the parent sees the whole result or none


if __name__ == "__main__":
    if sys.argv[1:] == ["--template"]:
        _template()
    else:
        _child(*sys.argv[1:5])


__all__ = ["MODULE_NAME", "IsolatedCheckError", "check_module", "export_module", "module_source", "run_check"]
