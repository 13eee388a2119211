"""What a unit's judge is made of: graded cells, their properties, cases, scores and the report.

A unit module (e.g. `course.judge.unit06`) creates one `Unit` and registers a check per graded test cell:

    unit = Unit(LAYOUTS["flash_attention_pytorch.ipynb"])  # its student cells and preamble (utils.judged.student_module)

    @unit.cell("test_forward", {"float32": 2, "bfloat16": 1}, selfcheck="float32")
    def forward(j: Judgement) -> None:
        q = j.randn(2, 77, 64)
        with j.case("float32", "flash_forward(B=2, N=77)"):
            out = j.call("flash_forward", q)          # runs in the sandboxed child
            j.close(out.result, expected, "O", atol=1e-4, rtol=1e-4)

A property earns its weight when every one of its cases passed; the cell scores its points times the share
of weight earned. Inputs come from a seed (`seed_for`), so a regrade sees the same cases.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch

from course.judge.child import CallFailed, Child
from utils import grading
from utils.judged.student_module import Layout
from utils.messages import bilingual


@dataclass(frozen=True)
class Cell:
    """The judge of one graded test cell."""

    grade_id: str
    properties: dict[str, float]  # bilingual name -> weight
    check: Callable[[Judgement], None]
    selfcheck: str | None = None  # the property whose case repeats the visible self-check (for flagging)
    gpu_only: frozenset[str] = frozenset()  # properties judged only on a GPU (left out elsewhere)
    timeout: float = 300.0  # seconds for one call of the student's code
    # the cell this one is judged right after, in the same child: their cases call the same kernels, which this
    # cell then finds compiled (two children at once would each compile them)
    after: str | None = None
    # times the student's code against a peer on the GPU: judged once the notebook's kernel has ended and the other
    # cells are judged (running beside it, they could load the GPU while the peer is timed), `preprocessor.Judge`
    timed: bool = False


@dataclass
class Unit:
    """The judge of one notebook: which cells are the student's code (and the module's preamble: `layout`, shared
    with the notebook's self-checks), what it may import, its graded cells."""

    layout: Layout
    banned: list[str] = field(default_factory=list)  # "module:attribute" the student's code may not call
    suspicious: dict[str, str] = field(default_factory=dict)  # names flagged for review here, with the reason
    cells: dict[str, Cell] = field(default_factory=dict)
    # on a GPU, cells judged at once, each in its own child (they share the Triton cache), where compiling the
    # student's kernels dominates; 1: one child, cell after cell (always on a CPU, where the interpreter's work
    # already fills the cores). Only for judges that keep no state between cells (Hypothesis is not thread-safe).
    parallel_cells_on_gpu: int = 1

    @property
    def notebook(self) -> str:
        return self.layout.notebook

    @property
    def student_cells(self) -> list[str]:
        return list(self.layout.cells)

    @property
    def preamble(self) -> str:
        return self.layout.preamble

    def cell(self, grade_id: str, properties: dict[str, float], **options) -> Callable:
        def register(check: Callable[[Judgement], None]) -> Callable[[Judgement], None]:
            self.cells[grade_id] = Cell(grade_id, dict(properties), check, **options)
            return check

        return register


def seed_for(secret: str, student: str, notebook: str, grade_id: str) -> int:
    """The seed of one student's graded cell: an HMAC keyed by the round's secret, fresh for each student and
    cell, the same for a regrade; a seed printed in feedback reveals neither the secret nor another's seed."""
    message = f"{student}\0{notebook}\0{grade_id}".encode()
    return int(hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()[:12], 16)


class Judgement:
    """Judging one graded cell: seeded inputs, calls into the child, and each case's verdict."""

    def __init__(self, cell: Cell, child: Child, seed: int, on_gpu: bool):
        self.cell, self.child, self.seed, self.on_gpu = cell, child, seed, on_gpu
        self.rng = random.Random(seed)
        self.generator = torch.Generator().manual_seed(seed)
        self.cases: dict[str, list[tuple[str, str | None]]] = {p: [] for p in cell.properties}

    def odd(self, low: int, high: int) -> int:
        """A random odd size in [low, high): never a multiple of a power-of-two tile."""
        return self.rng.randrange(low | 1, high, 2)

    def randn(self, *shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.randn(*shape, generator=self.generator).to(dtype)

    def call(self, target: str, *args, **options):
        return self.child.call(target, *args, timeout=self.cell.timeout, **options)

    def attempt(self, target: str, *args, **options):
        """(the child's answer, None), or (None, the failure) when the student's code failed: each property of
        the case then reports that failure."""
        try:
            return self.call(target, *args, **options), None
        except AssertionError as failure:
            return None, failure

    @contextlib.contextmanager
    def case(self, prop: str, label: str) -> Iterator[None]:
        """One case of property `prop`: it passes when the block finishes without an AssertionError."""
        if prop not in self.cases:
            raise KeyError(f"{self.cell.grade_id}: unknown property {prop!r}")
        try:
            yield
        except AssertionError as failure:
            self.cases[prop].append((label, str(failure)))
        except Exception as error:  # noqa: BLE001 (an odd output: None, an object, a wrong structure)
            self.cases[prop].append(
                (
                    label,
                    bilingual("输出的类型或形状不对", "the output has the wrong type or form") + f": {error}",
                )
            )
        else:
            self.cases[prop].append((label, None))

    @staticmethod
    def close(actual, expected: torch.Tensor, what: str, atol: float, rtol: float) -> None:
        grading.assert_close(actual, expected, what, atol=atol, rtol=rtol)

    @staticmethod
    def expect(condition: bool, zh: str, en: str) -> None:
        if not condition:
            raise AssertionError(bilingual(zh, en))

    def tensors(self, value, count: int, what: str) -> tuple[torch.Tensor, ...]:
        """`value` as a tuple of `count` tensors, or a failure that says what came back instead."""
        items = value if isinstance(value, tuple) else (value,)
        self.expect(
            len(items) == count and all(isinstance(t, torch.Tensor) for t in items),
            f"{what} 应返回 {count} 个张量，得到 {describe(value)}",
            f"{what} should return {count} tensor(s), got {describe(value)}",
        )
        return items

    def judged_properties(self) -> dict[str, float]:
        """The properties that count here: GPU-only ones only on a GPU."""
        skipped = set() if self.on_gpu else self.cell.gpu_only
        return {p: w for p, w in self.cell.properties.items() if p not in skipped}

    def passed(self, prop: str) -> bool:
        return bool(self.cases[prop]) and all(message is None for _, message in self.cases[prop])

    def share(self) -> float:
        """The share of the cell's weight earned (0 to 1)."""
        weights = self.judged_properties()
        if not weights:  # every property is GPU-only and this is no GPU
            return 0.0
        missing = [p for p in weights if not self.cases[p]]
        if missing:
            raise RuntimeError(f"{self.cell.grade_id}: no case judged property {missing}")
        return sum(w for p, w in weights.items() if self.passed(p)) / sum(weights.values())

    def report(self, points: float, score: float) -> str:
        lines = [f"评审 · Judge — {self.cell.grade_id}: {score:g} / {points:g}"]
        for prop in self.cell.properties:
            if prop not in self.judged_properties():
                lines.append(f"  –  {prop}: " + bilingual("仅在 GPU 上评分", "judged on a GPU only"))
                continue
            cases = self.cases[prop]
            lines.append(f"  {'✓' if self.passed(prop) else '✗'}  {prop} ({len(cases)})")
            for label, message in cases:
                if message is not None:
                    lines.append(f"       {label}:")
                    lines += [f"         {line}" for line in message.strip().splitlines()[:12]]
                    break  # the first failure of a property says what to fix
        return "\n".join(lines)


def describe(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"Tensor{tuple(value.shape)} {value.dtype}"
    if isinstance(value, tuple):
        return "(" + ", ".join(describe(v) for v in value) + ")"
    return repr(value)[:80]


def judge_cell(cell: Cell, child: Child, seed: int, on_gpu: bool) -> Judgement:
    """Run one cell's check; a call that failed before any case opened fails every property."""
    judgement = Judgement(cell, child, seed, on_gpu)
    try:
        cell.check(judgement)
    except CallFailed as failure:
        for prop in judgement.judged_properties():
            judgement.cases[prop].append((bilingual("准备", "setup"), str(failure)))
    return judgement
