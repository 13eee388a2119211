"""The judge inside `nbgrader autograde`: after the notebook ran, it decides every judged test cell's points.

Placed after `Execute` in `Autograde.autograde_preprocessors` (nbgrader_config.py). For a notebook that has a
unit judge (`course.judge.units`), it builds the student's module from the solution cells, scans it, runs it
in a sandboxed child on seeded inputs, compares with float64 references here, and replaces each judged test
cell's outputs by its report: nothing more for full marks, the points as the cell's value for partial
credit, an error for zero (nbgrader's own rule). What the notebook's kernel printed or raised in that cell
(the visible self-check) is kept as one line of the report, never as the grade. The summary of each notebook
(seeds, sandbox, flags, whether each judged property held) goes to `report_dir` for `course grade`.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Unicode

import utils
from course.judge import feedback_html, restore, sandbox, units
from course.judge.child import Child
from course.judge.core import Unit, judge_cell, seed_for
from course.judge.student_code import module_source, scan
from utils.messages import bilingual

FLAG_SELFCHECK = "self-check passed in the notebook but failed when judged"
FLAG_ALTERED = (
    "the test cell's nbgrader flags were changed in the submission (restored from the instructor's copy)"
)


def kernel_summary(cell) -> tuple[bool, str]:
    """(passed, one line) of what the notebook's kernel showed in the test cell (its visible self-check)."""
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    if errors:
        return False, bilingual("笔记本中的自检：失败", "self-check in the notebook: failed") + (
            f" ({errors[0].get('ename', '')}: {str(errors[0].get('evalue', ''))[:200]})"
        )
    return True, bilingual("笔记本中的自检：通过", "self-check in the notebook: passed")


def notebook_seconds(cell) -> float | None:
    """Seconds the notebook's kernel spent in `cell` (its visible self-check), from nbclient's timestamps."""
    timing = cell.get("metadata", {}).get("execution", {})
    try:
        started = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
        ended = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
    except (KeyError, TypeError, ValueError):
        return None
    return round((ended - started).total_seconds(), 1)


def stream(text: str):
    return nbformat.v4.new_output("stream", name="stdout", text=text + "\n")


def verdict_outputs(report: str, score: float, points: float, judged: bool = True) -> list:
    """Outputs that make nbgrader score the cell `score` of `points` (a cell with nothing judged here, GPU-only
    without a GPU, scores 0 by its value rather than by an error)."""
    outputs = [stream(report)]
    if score >= points:
        return outputs
    if score > 0 or not judged:
        return [
            *outputs,
            nbformat.v4.new_output("execute_result", data={"text/plain": f"{score:g}"}, execution_count=None),
        ]
    evalue = bilingual("评审未通过任何性质", "the judge found no property that holds")
    return [
        *outputs,
        nbformat.v4.new_output("error", ename="JudgeFailure", evalue=evalue, traceback=[evalue]),
    ]


def summary_path(folder: Path, student: str, unit: str, notebook: str) -> Path:
    """Where the judge leaves its summary of one student's notebook for `course grade`."""
    return folder / f"{student}__{unit}__{notebook}.json"


def points_of(cell) -> float:
    return float(cell.metadata["nbgrader"].get("points", 0))


class Judge(NbGraderPreprocessor):
    """Judge every test cell that the notebook's unit judge knows, outside the student's code."""

    enabled = Bool(True).tag(config=True)
    sandbox = Unicode("auto", help="'auto', 'namespaces' (required) or 'none' (no sandbox)").tag(config=True)
    salt = Unicode("", help="grading-round salt of the seeds").tag(config=True)
    report_dir = Unicode("", help="folder for each judged notebook's summary (JSON)").tag(config=True)

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader", {})
        feedback_html.forget_judged(nb)
        unit = units.UNITS.get(f"{info.get('notebook', '')}.ipynb")
        if unit is None:
            return nb, resources
        if not self.salt:
            raise RuntimeError(
                bilingual(
                    "没有评分密钥：请用 `python -m course grade` 评分（nbgrader 的 autograde 不会设置它，"
                    "每个学生的隐藏输入将可被推算）",
                    "no grading secret: grade with `python -m course grade` (nbgrader's own autograde sets "
                    "none, and every student's hidden inputs could be derived)",
                )
            )
        started = time.monotonic()
        summary = judge_notebook(nb, unit, info.get("student", ""), self.salt, self.sandbox)
        summary.update(
            student=info.get("student", ""),
            unit=info.get("assignment", ""),
            notebook=unit.notebook,
            seconds=round(time.monotonic() - started, 1),
        )
        if self.report_dir:
            path = summary_path(Path(self.report_dir), summary["student"], summary["unit"], unit.notebook)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(summary, ensure_ascii=False, indent=1), encoding="utf-8")
        return nb, resources


def judge_notebook(
    nb, unit: Unit, student: str, salt: str, requested_sandbox: str, parallel_cells: int | None = None
) -> dict:
    """Judge the notebook's cells in place, `parallel_cells` at once (default: the unit's choice on a GPU, else
    1); return the summary (scores, seeds, sandbox, flags, and whether each cell's visible self-check passed in
    the notebook)."""
    mechanism, _ = sandbox.choose(requested_sandbox)
    source = module_source(nb, unit.student_cells, unit.preamble)
    findings = scan(source, unit.banned, unit.suspicious)
    uses_library = [f for f in findings if f.kind == "attention"]
    reasons = [str(f) for f in findings]
    reasons += [f"{gid}: {FLAG_ALTERED}" for gid in nb.metadata.get(restore.ALTERED, [])]
    on_gpu = utils.mode().is_gpu
    parallel_cells = parallel_cells or (unit.parallel_cells_on_gpu if on_gpu else 1)
    settings = {"banned": unit.banned, "ban_fused_attention": True}
    cells = [
        cell
        for cell in nb.cells
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") in unit.cells
        and cell.metadata["nbgrader"].get("grade")
    ]
    owner = sandbox.new_owner()  # one uid for this notebook's children and their shared Triton cache
    triton_cache = sandbox.shared_folder("course-triton-", owner)
    children, children_lock, mine = [], threading.Lock(), threading.local()

    def child() -> Child:
        """This thread's child (one per thread; the children of a notebook share one Triton cache)."""
        if not hasattr(mine, "child"):
            mine.child = Child(source, settings, mechanism, triton_cache=triton_cache, owner=owner)
            with children_lock:
                children.append(mine.child)
        return mine.child

    def judge_one(cell) -> dict:
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        started = time.monotonic()
        seed = seed_for(salt, student, unit.notebook, grade_id)
        kernel_passed, kernel_line = kernel_summary(cell)
        points, judged, flag, properties, weights = points_of(cell), True, None, {}, {}
        if uses_library:
            score = 0.0
            report = "\n".join(
                [
                    bilingual(
                        "评审：调用了库或课程的注意力实现，不得分",
                        "judge: calls library or course attention; no credit",
                    )
                ]
                + [f"  {f}" for f in uses_library]
            )
        else:
            judge = unit.cells[grade_id]
            judgement = judge_cell(judge, child(), seed, on_gpu)
            judged = bool(judgement.judged_properties())
            weights = judgement.judged_properties()
            properties = {prop: judgement.passed(prop) for prop in weights}
            score = round(points * judgement.share(), 2)
            report = judgement.report(points, score)
            judged_selfcheck = judge.selfcheck in judgement.judged_properties()
            if kernel_passed and judged_selfcheck and not judgement.passed(judge.selfcheck):
                flag = f"{grade_id}: {FLAG_SELFCHECK}"
        header = f"{kernel_line}\n{bilingual('种子', 'seed')} {seed} · sandbox {mechanism}"
        return {
            "outputs": verdict_outputs(f"{header}\n{report}", score, points, judged=judged),
            "seed": seed,
            "selfcheck": kernel_passed,
            "selfcheck_seconds": notebook_seconds(cell),
            "score": [score, points],
            "properties": properties,
            "weights": weights,
            "flag": flag,
            "seconds": round(time.monotonic() - started, 1),
        }

    try:
        with ThreadPoolExecutor(parallel_cells) as pool:
            verdicts = list(pool.map(judge_one, cells))
    finally:
        for each in children:
            each.close()
        shutil.rmtree(triton_cache, ignore_errors=True)
    summary = {"scores": {}, "seeds": {}, "selfchecks": {}, "cell_seconds": {}, "selfcheck_seconds": {}}
    summary["properties"] = {}  # grade_id -> {property: passed}, of the properties judged here
    for cell, verdict in zip(cells, verdicts, strict=True):
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        cell.outputs = verdict["outputs"]
        summary["scores"][grade_id] = verdict["score"]
        summary["properties"][grade_id] = verdict["properties"]
        feedback_html.record_judged(cell, verdict["weights"], verdict["properties"])
        summary["seeds"][grade_id] = verdict["seed"]
        summary["selfchecks"][grade_id] = verdict["selfcheck"]
        summary["cell_seconds"][grade_id] = verdict["seconds"]
        if verdict["selfcheck_seconds"] is not None:
            summary["selfcheck_seconds"][grade_id] = verdict["selfcheck_seconds"]
        if verdict["flag"]:
            reasons.append(verdict["flag"])
    return {**summary, "sandbox": mechanism, "flagged": bool(reasons), "reasons": reasons}
