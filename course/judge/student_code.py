"""The student's code as the judge sees it: a module built from the notebook's solution cells, and a scan.

The module is the unit's preamble (its imports, fixed by the course) followed by the imports, definitions
and assignments of the solution cells, in notebook order; other top-level statements (demo calls, prints)
are left out. The scan reads that text, never runs it: calls to library attention or the course's
references cost the notebook's judged points; other tampering signs (exception hooks, `sys.modules`,
exits, killing processes, reading files, threads, patching an imported module) flag the submission for review.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from utils.isolation import kept_statements

FUSED_ATTENTION = (
    "scaled_dot_product_attention",
    "_scaled_dot_product",
    "_flash_attention",
    "_efficient_attention",
    "_cudnn_attention",
    "multi_head_attention_forward",
    "MultiheadAttention",
)
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
        return f"{self.kind}: {self.what} (line {self.line}: {self.text.strip()[:120]})"


def solution_sources(nb, grade_ids: list[str]) -> list[tuple[str, str]]:
    """(grade_id, source) of the notebook's cells with these solution grade ids, in notebook order."""
    found = []
    for cell in nb.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "code" and grade_id in grade_ids:
            found.append((grade_id, cell.source))
    return found


def module_source(nb, grade_ids: list[str], preamble: str) -> str:
    """The student's module: the unit's preamble, then what the solution cells define."""
    parts = [preamble.rstrip() + "\n"]
    for grade_id, source in solution_sources(nb, grade_ids):
        try:
            kept = kept_statements(source, f"<cell {grade_id}>")
        except SyntaxError as error:  # the child reports it when it loads the module
            kept = [(None, f"raise SyntaxError({f'cell {grade_id}: {error}'!r})")]
        parts.append(f"\n# --- cell {grade_id}\n" + "\n".join(text.rstrip() for _, text in kept) + "\n")
    return "".join(parts)


def _names(node: ast.AST) -> list[str]:
    """The identifiers a node mentions, and the strings it passes to a call."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.alias):
        return [*node.name.split("."), *([node.asname] if node.asname else [])]
    if isinstance(node, ast.ImportFrom) and node.module:
        return node.module.split(".")
    if isinstance(node, ast.Call):  # getattr(torch.nn.functional, "scaled_dot_product_attention")
        return [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return []


def _imported(tree: ast.AST) -> set[str]:
    """The names that import statements bind (`import utils.grading` binds `utils`)."""
    return {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }


def _patched(node: ast.AST, imported: set[str]) -> bool:
    """Whether `node` assigns or deletes an attribute or item of an imported name (`grading.assert_close = …`):
    graded code has no reason to change a module it imported, the checks and the judge's child included."""
    if isinstance(node, ast.Assign | ast.Delete):
        targets = node.targets
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        targets = [node.target]
    else:
        return False
    for target in targets:
        for part in target.elts if isinstance(target, ast.Tuple | ast.List) else [target]:
            if not isinstance(part, ast.Attribute | ast.Subscript):
                continue
            while isinstance(part, ast.Attribute | ast.Subscript):
                part = part.value
            if isinstance(part, ast.Name) and part.id in imported:
                return True
    return False


def scan(source: str, banned: list[str] = (), suspicious: dict[str, str] | None = None) -> list[Finding]:
    """Suspicious lines of the student's module (`banned`: the unit's "module:attribute" names; `suspicious`: the
    unit's own {name: reason} to flag, e.g. NumPy where the work must happen in kernels)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = source.splitlines()
    exact = {name.partition(":")[2] for name in banned}
    findings: dict[tuple[str, int, str], Finding] = {}
    imported = _imported(tree)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", None)
        if line is None:
            continue
        if _patched(node, imported):
            what = "patching an imported module"
            findings.setdefault(("tampering", line, what), Finding("tampering", what, line, lines[line - 1]))
        for name in _names(node):
            for word in [w for w in FUSED_ATTENTION if w in name] + ([name] if name in exact else []):
                findings.setdefault(
                    ("attention", line, word), Finding("attention", word, line, lines[line - 1])
                )
            if name in TAMPERING or name in (suspicious or {}):
                what = TAMPERING.get(name) or suspicious[name]
                findings.setdefault(
                    ("tampering", line, what), Finding("tampering", what, line, lines[line - 1])
                )
    return sorted(findings.values(), key=lambda f: (f.line, f.kind, f.what))
