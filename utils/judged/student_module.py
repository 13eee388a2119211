"""The student's module: the code of a notebook that grading runs, built the same way by the judge and by the
notebook's visible self-checks.

The module is the unit's preamble (its imports, fixed by the course: `LAYOUTS`) followed by the top-level
imports, definitions and assignments of the unit's student cells, in notebook order; other top-level
statements (demo calls, prints) are left out. Nothing else of the notebook exists in it: a notebook global or a
helper defined in an added cell is a `NameError` when graded. `missing_names` finds those names before anything
runs, and the self-check fails on them with `missing_names_message`.

Where the cells come from:

- the judge takes them from the submitted notebook, by nbgrader's grade ids (`course.judge.student_code`);
- the notebook's kernel has no nbgrader metadata, and its notebook file may be unsaved or absent. It takes, for
  each student cell, the cell that defined that cell's named object (`Layout.cells`) as the kernel last ran it:
  Python keeps the text of every cell the kernel ran for its tracebacks (`linecache`), and the object points to
  its own (`source_file`). So cells run out of order, edited and re-run, or never saved count as they are in
  the kernel; a cell not run yet is left out.
"""

from __future__ import annotations

import ast
import builtins
import linecache
import symtable
import sys
import types
from dataclasses import dataclass

from utils.messages import bilingual

MODULE_NAME = "student_code"
_KEPT_STATEMENTS = (ast.Import, ast.ImportFrom, ast.ClassDef, ast.Assign, ast.AnnAssign)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_MODULE_NAMES = {"__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__", "__builtins__"}
_ENTRY_POINT = "# the judge's entry point"  # preamble lines of the judge's own, not names for the student


@dataclass(frozen=True)
class Layout:
    """What grading runs of one notebook."""

    notebook: str
    cells: dict[str, str]  # grade id of each student cell, in notebook order -> an object that cell defines
    preamble: str

    def provided(self) -> list[str]:
        """The names the preamble gives the student's code (the judge's entry points left out)."""
        lines = [line for line in self.preamble.splitlines() if _ENTRY_POINT not in line]
        return sorted(_defined(symtable.symtable("\n".join(lines), "<preamble>", "exec")))


PLAIN = "import math\n\nimport torch\n\nimport utils"
TRITON = (
    "import utils\n"
    "import utils.checks.isolation\n"
    "import utils.judged.triton_calls  # the judge's entry point in its child (not a line of the notebook)\n"
    "{extra}"
    "\n"
    "import torch\n"
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "DEVICE = utils.device()"
)


def triton_preamble(*modules: str, after: str = "") -> str:
    """The module head of a Triton unit: the notebook's imports, the judge's entry point and `modules`."""
    return TRITON.format(extra="".join(f"import {m}\n" for m in modules)) + after


def _layouts(*layouts: Layout) -> dict[str, Layout]:
    return {layout.notebook: layout for layout in layouts}


LAYOUTS = _layouts(
    Layout(
        "memory_bottleneck.ipynb",
        {
            "standard_attention": "standard_attention",
            "memory_model": "attention_memory_bytes",
            "max_sequence": "max_sequence_length",
        },
        PLAIN,
    ),
    Layout(
        "io_aware.ipynb",
        {
            "ai_intensity": "arithmetic_intensity",
            "ai_roofline": "roofline",
            "fused_softmax": "fused_scale_mask_softmax",
            "io_hbm_bytes": "hbm_bytes_standard",
        },
        PLAIN
        + "\nimport utils.judged.slow_memory  # the judge's entry point in its child (not a line of the notebook)\n",
    ),
    Layout(
        "tiling.ipynb",
        {"tl_matmul": "tiled_matmul", "tl_loads": "matmul_hbm_loads", "tl_best_tile": "best_tile"},
        PLAIN
        + "\nimport utils.judged.slow_memory  # the judge's entry point in its child (not a line of the notebook)\n",
    ),
    Layout(
        "online_softmax.ipynb",
        {
            "os_online_softmax": "online_softmax",
            "os_merge_states": "merge_softmax_states",
            "os_merge_attention": "merge_attention_states",
            "os_weighted_sum": "online_softmax_weighted_sum",
        },
        PLAIN
        + "\nimport utils.judged.sweeps  # the judge's entry point in its child (not a line of the notebook)\n"
        + "from utils.softmax_state import finite_max\n",
    ),
    Layout(
        "recomputation.ipynb",
        {
            "rc_saved_bytes": "saved_bytes",
            "rc_checkpoint": "checkpointed_forward",
            "rc_backward_lse": "attention_backward_from_lse",
        },
        "import math\n\nimport torch\nfrom torch import nn\n\nimport utils\n"
        "import utils.judged.recompute  # the judge's entry points in its child (not a line of the notebook)\n"
        "from utils import grading, measure, recompute",
    ),
    Layout(
        "flash_attention_pytorch.ipynb",
        {
            "fa_score_tile": "score_tile",
            "fa_forward": "flash_forward",
            "fa_backward": "flash_backward",
            "fa_function": "FlashAttentionPyTorch",
        },
        PLAIN,
    ),
    Layout(
        "triton_basics.ipynb",
        {
            "ws_forward": "weighted_sum_forward",
            "ws_backward": "weighted_sum_backward",
            "ws_autograd": "WeightedSum",
            "softmax_rows": "softmax_rows",
        },
        triton_preamble(),
    ),
    Layout(
        "flash_attention_triton.ipynb",
        {
            "fa_forward_kernel": "flash_fwd_kernel",
            "fa_function": "FlashAttentionTriton",
            "fa_backward_dkdv": "launch_dkdv",
            "fa_backward_dq": "launch_dq",
        },
        triton_preamble("utils.checks.flash_triton"),
    ),
    Layout(
        "systems_lab.ipynb",
        {
            "sl_benchmark": "benchmark",
            "sl_autocast": "autocast_dtypes",
            "sl_activation_memory": "activation_memory_bytes",
        },
        "import math\nimport statistics\nimport time\n\nimport torch\nimport torch.nn.functional as F\n"
        "from torch import nn\n\nimport utils\n"
        "import utils.judged.systems  # the judge's entry points in its child (not a line of the notebook)\n"
        "from utils import timing, toy_transformer\n"
        "from utils.toy_transformer import Transformer, TransformerConfig",
    ),
    Layout(
        "hopper.ipynb",
        {"hopper_kernel": "hopper_fwd_kernel", "hopper_launch": "hopper_attention"},
        triton_preamble(
            "utils.checks.hopper",
            "utils.hopper",
            after="\nfrom triton.tools.tensor_descriptor import TensorDescriptor",
        ),
    ),
)


def kept_statements(source: str, filename: str) -> list[tuple[ast.stmt, str]]:
    """Top-level imports, definitions and assignments of one cell (with decorators), and their text."""
    tree = ast.parse(source, filename=filename)
    lines = source.splitlines(keepends=True)
    kept = []
    for node in tree.body:
        if isinstance(node, _KEPT_STATEMENTS + _FUNCTIONS):
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            kept.append((node, "".join(lines[first - 1 : node.end_lineno])))
    return kept


# What Python's parser raises on code it cannot read: bad syntax, a NUL, nesting too deep (MemoryError, RecursionError)
UNPARSABLE = (SyntaxError, ValueError, RecursionError, MemoryError)


def _kept_text(grade_id: str, source: str) -> str:
    try:
        return "\n".join(text.rstrip() for _, text in kept_statements(source, f"<cell {grade_id}>"))
    except UNPARSABLE as error:  # reported when the module loads
        return f"raise SyntaxError({f'cell {grade_id}: {str(error) or type(error).__name__}'!r})"


def module_source(cells: list[tuple[str, str]], preamble: str) -> str:
    """The student's module: the preamble, then what each (grade id, source) cell defines."""
    parts = [preamble.rstrip() + "\n"]
    for grade_id, source in cells:
        parts.append(f"\n# --- cell {grade_id}\n" + _kept_text(grade_id, source) + "\n")
    return "".join(parts)


def _defined(table: symtable.SymbolTable) -> set[str]:
    """Names a module defines: its imports, assignments, functions and classes, and what its functions assign
    under `global`."""
    names = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
    return names | _assigned_as_global(table)


def _assigned_as_global(table: symtable.SymbolTable) -> set[str]:
    names = set()
    for child in table.get_children():
        names |= {s.get_name() for s in child.get_symbols() if s.is_declared_global() and s.is_assigned()}
        names |= _assigned_as_global(child)
    return names


def _read(table: symtable.SymbolTable) -> set[str]:
    """The module-level names a scope and the scopes inside it read."""
    top = table.get_type() == "module"
    names = {s.get_name() for s in table.get_symbols() if s.is_referenced() and (top or s.is_global())}
    for child in table.get_children():
        names |= _read(child)
    return names


def missing_names(
    cells: list[tuple[str, str]], preamble: str, not_run: set[str] = frozenset()
) -> dict[str, list[str]]:
    """{name: the grade ids of the cells that read it} for each name the module reads but neither the preamble
    nor a student cell defines (a `from … import *` anywhere: none can be told). `not_run`: the named objects of
    student cells the kernel has not run yet, which the judge will have (an earlier exercise's class calling a
    later exercise's function)."""
    source = module_source(cells, preamble)
    if any(isinstance(n, ast.ImportFrom) and n.names[0].name == "*" for n in ast.walk(ast.parse(source))):
        return {}
    known = _defined(symtable.symtable(source, MODULE_NAME, "exec")) | set(dir(builtins)) | _MODULE_NAMES
    known |= set(not_run)
    missing: dict[str, list[str]] = {}
    for grade_id, cell in cells:
        try:
            table = symtable.symtable(_kept_text(grade_id, cell), grade_id, "exec")
        except SyntaxError:
            continue
        for name in sorted(_read(table) - known):
            missing.setdefault(name, []).append(grade_id)
    return missing


def missing_names_message(missing: dict[str, list[str]], layout: Layout) -> str:
    names = ", ".join(f"`{name}`（{'、'.join(cells)}）" for name, cells in missing.items())
    names_en = "; ".join(f"`{name}` (read in {', '.join(cells)})" for name, cells in missing.items())
    provided = ", ".join(layout.provided())
    return bilingual(
        f"评分时这些名字不存在：{names}。评审程序只运行本单元的前置代码（提供 {provided}）和各解答单元格中的 "
        "import、定义与赋值；笔记本中其他单元格定义的名字（全局变量、另加单元格里的辅助函数）都不存在。"
        "请把辅助函数和常量放进解答单元格内",
        f"these names will not exist when graded: {names_en}. The judge runs only this unit's preamble (which "
        f"provides {provided}) and the imports, definitions and assignments of the solution cells; names defined "
        "in other cells of the notebook (notebook globals, helpers in an added cell) do not exist there. Put "
        "helpers and constants inside the solution cell",
    )


def _python_function(obj):
    """The plain Python function behind a function, method or (autotuned) Triton kernel, else None."""
    for _ in range(8):
        if isinstance(obj, staticmethod | classmethod):
            obj = obj.__func__
        if isinstance(obj, types.FunctionType):
            return obj
        if not hasattr(obj, "fn"):
            return None
        obj = obj.fn
    return None


def source_file(obj) -> str | None:
    """The file (or notebook cell) where `obj` was defined, if Python kept its source lines."""
    candidates = [obj] if not isinstance(obj, type) else list(vars(obj).values())
    for candidate in candidates:
        function = _python_function(candidate)
        if function is not None:
            filename = function.__code__.co_filename
            if linecache.getlines(filename, function.__globals__):
                return filename
    return None


def _namespace(namespace: dict | None) -> dict:
    return vars(sys.modules["__main__"]) if namespace is None else namespace


def kernel_cells(layout: Layout, namespace: dict | None = None) -> list[tuple[str, str]]:
    """(grade id, source) of each student cell as the kernel last ran it: the cell that defined the cell's named
    object in `namespace` (default: the notebook's). Cells whose object is not defined yet are left out."""
    namespace = _namespace(namespace)
    cells = []
    for grade_id, name in layout.cells.items():
        if name not in namespace:
            continue
        filename = source_file(namespace[name])
        if filename is None:
            raise AssertionError(
                bilingual(
                    f"找不到定义 {name} 的单元格（解答单元格 {grade_id}）：请在那个单元格里用 def 或 class 定义它",
                    f"cannot find the cell that defined {name} (solution cell {grade_id}): define it there with "
                    "def or class",
                )
            )
        cells.append((grade_id, "".join(linecache.getlines(filename))))
    return cells


def _check(cells: list[tuple[str, str]], layout: Layout) -> None:
    run = {grade_id for grade_id, _ in cells}
    missing = missing_names(cells, layout.preamble, {n for g, n in layout.cells.items() if g not in run})
    if missing:
        raise AssertionError(missing_names_message(missing, layout))


def checked_source(notebook: str, namespace: dict | None = None) -> str:
    """The module grading would run of the notebook's cells as the kernel ran them; AssertionError (bilingual)
    naming every name it reads that will not exist when graded."""
    layout = LAYOUTS[notebook]
    cells = kernel_cells(layout, namespace)
    _check(cells, layout)
    return module_source(cells, layout.preamble)


_built: dict[str, tuple[str, types.ModuleType]] = {}  # notebook -> (source, module) of the last build


def load(notebook: str, namespace: dict | None = None) -> types.ModuleType:
    """The student's module of `notebook`, built from the kernel's cells and run in this process (checked and
    run again only when a cell changed)."""
    layout = LAYOUTS[notebook]
    cells = kernel_cells(layout, namespace)
    source = module_source(cells, layout.preamble)
    if notebook in _built and _built[notebook][0] == source:
        return _built[notebook][1]
    _check(cells, layout)
    filename = f"<{MODULE_NAME}: {notebook}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    module = types.ModuleType(MODULE_NAME)
    module.__file__ = filename
    sys.modules[MODULE_NAME] = module
    exec(compile(source, filename, "exec"), vars(module))
    _built[notebook] = (source, module)
    return module


def judged(obj, notebook: str, namespace: dict | None = None):
    """What grading runs in place of `obj`: for a function or class of the notebook, the object of the same name
    in the student's module (AssertionError where the student cells do not define it); for a method of one,
    the same method of the module's object; anything else as it is."""
    if isinstance(obj, types.MethodType):
        owner = judged(obj.__self__, notebook, namespace)
        return obj if owner is obj.__self__ else getattr(owner, obj.__name__)
    name = getattr(obj, "__name__", None)
    if getattr(obj, "__module__", None) != "__main__" or not name or name == "<lambda>":
        return obj
    module = load(notebook, namespace)
    if not hasattr(module, name):
        raise AssertionError(
            bilingual(
                f"{name} 不是在解答单元格里定义的：评分时它不存在。请把它放进解答单元格",
                f"{name} is not defined in a solution cell: it will not exist when graded. Put it inside the "
                "solution cell",
            )
        )
    return getattr(module, name)


__all__ = [
    "LAYOUTS",
    "MODULE_NAME",
    "Layout",
    "checked_source",
    "judged",
    "kept_statements",
    "kernel_cells",
    "load",
    "missing_names",
    "missing_names_message",
    "module_source",
]
