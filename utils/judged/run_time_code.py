"""Code the student's code makes as it runs in the judge's child, seen there (issue 45, principle 4).

The similarity check reads text, and reads names: code run from data (a packed string, a pickle that an
environment variable told `torch.load` to unpickle) is beyond it. An audit hook (`sys.addaudithook`) in the child
records, for review, what the student's own code causes: source compiled, code executed or a code object made with
a frame of the student's as the caller, or a standard-library runner (`RUNNERS`) it called (the course's code, the
standard library, torch and Triton compile and execute for themselves: their frames are the callers then), code
loaded with `marshal`, a module the import system loads from outside the library while the student's code is on the
stack (one it wrote), and a global an unpickler looks up while the student's code is on the stack that a tensor file
never needs (torch's own list for `weights_only` loads). The student's code shares the child's process with the
hook, so this is a second look, not a proof.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from pathlib import Path

EVENTS = ("compile", "exec", "code.__new__", "marshal.loads", "pickle.find_class")
# Standard-library modules that compile or run the source or code they are handed: whose code runs is their caller's
# (logging/config evaluates a configuration's handler arguments, inspect annotations, optparse a file of settings,
# site a .pth file's import lines)
RUNNERS = (
    "bdb code codeop cProfile doctest inspect logging/config optparse pdb profile runpy site timeit trace typing"
).split()
IMPORT_SYSTEM = ("<frozen importlib", "<frozen zipimport")  # frames that load a module's code from its file
LOADS = ("compile", "marshal.loads")  # how they load it: from source, from bytecode
LIMIT = 10  # different things recorded (the reason names them)
SHOWN = 80  # characters of each


def library_folders() -> tuple[str, ...]:
    """Where the code that is not the student's lives: the interpreter's, the installed packages, the course's
    `utils`; and the import system's frozen modules."""
    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    folders |= set(sysconfig.get_paths().values()) | set(site.getsitepackages())
    folders.add(str(Path(__file__).resolve().parents[1]))
    return (*sorted(f"{folder.rstrip('/')}/" for folder in folders), "<frozen ")


def tensor_globals() -> frozenset[str]:
    """The globals torch's `weights_only` unpickler allows ("module.name"): all a tensor file needs."""
    try:
        from torch._weights_only_unpickler import _get_allowed_globals

        return frozenset(_get_allowed_globals())
    except (ImportError, AttributeError):  # another torch: every global counts
        return frozenset()


class Watch:
    """The audit hook: `seen` holds what the student's code made at run time ("event: what"), LIMIT at most."""

    def __init__(self):
        self.library, self.allowed = library_folders(), tensor_globals()
        stdlib = sysconfig.get_paths()["stdlib"]
        # a module's file, or its frozen name where the interpreter has it frozen (site, from Python 3.11)
        self.runners = frozenset(
            where
            for name in RUNNERS
            for where in (f"{stdlib}/{name}.py", f"<frozen {name.replace('/', '.')}>")
        )
        self.seen: list[str] = []

    def students(self, frame) -> bool:
        """Whether `frame` is the student's code, or a runner (`code.InteractiveInterpreter`, `timeit`, `bdb`, …)
        the student's code called."""
        while frame is not None and frame.f_code.co_filename in self.runners:
            frame = frame.f_back
        return frame is not None and not frame.f_code.co_filename.startswith(self.library)

    def __call__(self, event: str, args: tuple) -> None:
        if event not in EVENTS or len(self.seen) >= LIMIT:  # first: sys._getframe raises an event of its own
            return
        caller = sys._getframe(1)
        if event == "pickle.find_class":
            what = f"{args[0]}.{args[1]}"
            if what in self.allowed or not self.on_stack(caller):
                return
        elif self.students(caller):
            what = named(event, args)
        elif (loaded := self.imported(event, args, caller)) is not None:
            what = loaded
        else:
            return
        entry = f"{event}: {what}"[:SHOWN].rstrip(": ")
        if entry not in self.seen:
            self.seen.append(entry)

    def imported(self, event: str, args: tuple, caller) -> str | None:
        """The file of a module the import system loads, as the student's code runs, from outside the library (one
        the student's code wrote: the judge's child has nothing handed in to import); else None."""
        if event not in LOADS or not caller.f_code.co_filename.startswith(IMPORT_SYSTEM):
            return None
        names = caller.f_locals
        path = args[1] if event == "compile" else names.get("bytecode_path") or names.get("pathname")
        # a file's path (an extension module's init compiles code of its own, as "<internal>")
        if isinstance(path, str) and os.path.isabs(path) and not path.startswith(self.library):
            return f"import {path}" if self.on_stack(caller) else None
        return None

    def on_stack(self, frame) -> bool:
        """Whether a frame of the student's code is `frame` or calls it, however deep."""
        while frame is not None:
            if self.students(frame):
                return True
            frame = frame.f_back
        return False


def named(event: str, args: tuple) -> str:
    """What an event made or ran, by name: a compiled file's, a code object's."""
    if event == "exec":
        return getattr(args[0], "co_name", "")
    if event == "compile":
        return args[1]
    return args[2] if event == "code.__new__" else ""


def watch() -> Watch:
    """Install the hook (for the rest of the process: audit hooks cannot be removed) and return it."""
    hook = Watch()
    sys.addaudithook(hook)
    return hook
