"""The student's code as the judge sees it: a module built from the notebook's solution cells, and a scan.

The module is built by `utils.judged.student_module` (the builder the notebook's visible self-checks use too): the
unit's preamble (its imports, fixed by the course) followed by the imports, definitions and assignments of
the solution cells, in notebook order; other top-level statements (demo calls, prints) are left out. The scan reads that text, never runs it: what it imports or reaches of PyTorch's fused
attention or of the unit's banned references (resolved from the imports: the student's own names may hold any
word) costs the notebook's judged points; other tampering signs (exception hooks, `sys.modules`, exits,
killing processes, reading files, threads, patching an imported module) flag the submission for review.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from course.neutral import visible
from utils.judged import student_module

FUSED_ATTENTION = (  # words in the names of PyTorch's fused attention (functions, modules, aten operators)
    "scaled_dot_product",
    "_flash_attention",
    "_efficient_attention",
    "_cudnn_attention",
    "multi_head_attention",
    "MultiheadAttention",
    "flex_attention",
)
DOTTED = re.compile(
    r"[A-Za-z_][\w.]*[.:]\w+"
)  # a string naming an object: "torch.nn.functional.x", "utils.grading:x"
DICT_READS = {"get", "keys", "values", "items", "copy", "__getitem__", "__contains__", "__len__", "__iter__"}
TAMPERING = {
    "excepthook": "sys.excepthook",
    "set_custom_exc": "IPython custom exception handler",
    "get_ipython": "IPython shell access",
    "builtins": "builtins",
    "modules": "sys.modules",
    "_exit": "os._exit",
    "exit": "exit",
    "quit": "quit",
    "kill": "killing processes",
    "killpg": "killing processes",
    "signal": "signals",
    "subprocess": "subprocesses",
    "multiprocessing": "subprocesses",
    "threading": "threads",
    "_thread": "threads",
    "concurrent": "threads",
    "asyncio": "threads",  # asyncio.to_thread, run_in_executor: a thread outside the watch's dispatch modes
    "setattr": "setattr",
    "delattr": "delattr",
    "ctypes": "ctypes",
    "open": "opening files",
    "reload": "module reload",
    "__import__": "__import__",
    "exec": "exec",
    "eval": "eval",
    "_C": "torch._C",
    "course": "the instructor package",
}


@dataclass(frozen=True)
class Finding:
    """One suspicious line: `attention` findings cost points, the others only flag."""

    kind: str  # "attention" or "tampering"
    what: str
    line: int
    text: str

    def __str__(self) -> str:
        return visible(f"{self.kind}: {self.what} (line {self.line}: {self.text.strip()[:120]})")


def solution_sources(nb, grade_ids: list[str]) -> list[tuple[str, str]]:
    """(grade_id, source) of the notebook's cells with these solution grade ids, in notebook order, whatever
    their type: nbgrader turns a solution cell handed in as markdown back into code, and runs it."""
    found = []
    for cell in nb.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in grade_ids:
            found.append((grade_id, cell.source))
    return found


def module_source(nb, grade_ids: list[str], preamble: str) -> str:
    """The student's module: the unit's preamble, then what the solution cells define."""
    return student_module.module_source(solution_sources(nb, grade_ids), preamble)


def _names(node: ast.AST) -> list[str]:
    """The identifiers a node mentions, and the strings it passes to a call (for the tampering signs)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.alias):
        return [*node.name.split("."), *([node.asname] if node.asname else [])]
    if isinstance(node, ast.ImportFrom) and node.module:
        return node.module.split(".")
    if isinstance(node, ast.Call):
        return [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return []


def _string(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _called(node: ast.AST, name: str) -> bool:
    """Whether `node` calls the builtin `name` (`globals()`, `vars(x)`, `getattr(x, "a")`)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


class Paths:
    """What the module's expressions stand for, as dotted paths of imported objects: after
    `import torch.nn.functional as F`, `F.scaled_dot_product_attention` is
    "torch.nn.functional.scaled_dot_product_attention". Names bound by imports, and plain aliases of such
    paths (`j = judged`, `f = getattr(F, "softmax")`), resolve; the student's own functions, variables and
    attributes never do, whatever they are called."""

    def __init__(self, tree: ast.AST):
        self.bound: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    self.bound[alias.asname or top] = alias.name if alias.asname else top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        self.bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        aliases = [pair for node in ast.walk(tree) for pair in _aliases(node)]
        while new := {n: p for n, v in aliases if n not in self.bound and (p := self.of(v))}:
            self.bound.update(new)

    def of(self, node: ast.AST) -> str | None:
        """The dotted path `node` stands for, or None where it is not an imported object."""
        if isinstance(node, ast.Name):
            return self.bound.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.of(node.value)
            return base and f"{base}.{node.attr}"
        if isinstance(node, ast.Subscript) and (key := _string(node.slice)):
            if _called(node.value, "globals"):  # globals()["grading"]
                return self.bound.get(key)
            return self.item(self.of(node.value), key)
        if isinstance(node, ast.Call):
            first = node.args[0] if node.args else None
            if _called(node, "getattr") and len(node.args) >= 2 and (name := _string(node.args[1])):
                base = self.of(first)
                return base and f"{base}.{name}"
            if _called(node, "vars") and first is not None:
                base = self.of(first)
                return base and f"{base}.__dict__"
            if _called(node, "__import__") and (name := _string(first)):
                return name.split(".")[0]
            if self.of(node.func) == "importlib.import_module":
                return _string(first)
            if isinstance(node.func, ast.Attribute) and node.func.attr == "get" and (key := _string(first)):
                return self.item(self.of(node.func.value), key)  # F.__dict__.get("softmax")
        return None

    @staticmethod
    def item(container: str | None, key: str) -> str | None:
        """The path of `container[key]` where the container is a module's namespace or sys.modules."""
        if container == "sys.modules":
            return key
        if container and container.endswith(".__dict__"):
            return f"{container.removesuffix('.__dict__')}.{key}"
        return None


def _aliases(node: ast.AST) -> list[tuple[str, ast.AST]]:
    """(name, value) of the plain assignments in `node` (`a = x`, `a, b = x, y`, `a: T = x`, `(a := x)`)."""
    if isinstance(node, ast.Assign):
        pairs = [(target, node.value) for target in node.targets]
    elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None:
        pairs = [(node.target, node.value)]
    else:
        return []
    found = []
    while pairs:
        target, value = pairs.pop()
        if isinstance(target, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List):
            pairs += zip(target.elts, value.elts, strict=False)
        elif isinstance(target, ast.Name):
            found.append((target.id, value))
    return found


def _library_attention(path: str, banned: list[str]) -> bool:
    """Whether an imported object's path names PyTorch's fused attention, or one of the unit's banned
    "module:attribute" names (in that module or wherever its package passes it on)."""
    parts = path.split(".")
    if any(word in part for part in parts for word in FUSED_ATTENTION):
        return True
    return any(
        parts[0] == module.split(".")[0] and attribute in parts[1:]
        for module, _, attribute in (name.partition(":") for name in banned)
    )


def _used_paths(node: ast.AST, paths: Paths) -> list[str]:
    """The paths of imported objects that `node` imports, reaches or names in a string passed to a call."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        return [f"{node.module}.{alias.name}" for alias in node.names]
    if isinstance(node, ast.Call):  # pydoc.locate("torch.nn.functional.scaled_dot_product_attention")
        named = [s.replace(":", ".") for a in node.args if (s := _string(a)) and DOTTED.fullmatch(s)]
        return [p for p in [paths.of(node), *named] if p]
    path = paths.of(node) if isinstance(node, ast.Name | ast.Attribute | ast.Subscript) else None
    return [path] if path else []


def _patched(node: ast.AST, paths: Paths) -> bool:
    """Whether `node` changes an imported object: assigns or deletes one of its attributes or items
    (`grading.assert_close = …`, through an alias, `vars(m)[…]`, `m.__dict__[…]` or `globals()["m"]`), or
    calls a method that does (`m.__dict__.update(…)`, `object.__setattr__(m, …)`). Graded code has no reason to
    change a module it imported, the checks and the judge's child included."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        owner = paths.of(node.func.value)
        if node.func.attr in ("__setattr__", "__delattr__"):
            return bool(owner or (node.args and paths.of(node.args[0])))
        return bool(owner and owner.endswith(".__dict__") and node.func.attr not in DICT_READS)
    if isinstance(node, ast.Assign | ast.Delete):
        targets = node.targets
    elif isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For | ast.AsyncFor):
        targets = [node.target]
    else:
        return False
    for target in targets:
        for part in target.elts if isinstance(target, ast.Tuple | ast.List) else [target]:
            while isinstance(part, ast.Attribute | ast.Subscript):
                part = part.value
                if paths.of(part):
                    return True
    return False


def parsed(source: str) -> ast.Module | None:
    """The source's syntax tree; None where Python cannot parse it (bad syntax, nesting too deep to parse)."""
    try:
        return ast.parse(source)
    except student_module.UNPARSABLE:
        return None


def scan(source: str, banned: list[str] = (), suspicious: dict[str, str] | None = None) -> list[Finding]:
    """Suspicious lines of the student's module (`banned`: the unit's "module:attribute" names; `suspicious`: the
    unit's own {name: reason} to flag, e.g. NumPy where the work must happen in kernels). Library attention is
    what an imported path names, never a word inside the student's own names."""
    tree = parsed(source)
    if tree is None:
        return []
    lines = source.splitlines()
    findings: dict[tuple, Finding] = {}
    paths = Paths(tree)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", None)
        if line is None:
            continue
        if _patched(node, paths):
            what = "patching an imported module"
            findings.setdefault(("tampering", line, what), Finding("tampering", what, line, lines[line - 1]))
        for path in _used_paths(node, paths):  # one per line: the outermost path, seen first
            if _library_attention(path, banned):
                findings.setdefault(("attention", line), Finding("attention", path, line, lines[line - 1]))
        for name in _names(node):
            if name in TAMPERING or name in (suspicious or {}):
                what = TAMPERING.get(name) or suspicious[name]
                findings.setdefault(
                    ("tampering", line, what), Finding("tampering", what, line, lines[line - 1])
                )
    return sorted(findings.values(), key=lambda f: (f.line, f.kind, f.what))
