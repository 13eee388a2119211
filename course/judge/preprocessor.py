"""The judge inside `nbgrader autograde`: after the notebook ran, it decides every judged test cell's points.

`StartJudge`, placed before `Execute` in `Autograde.autograde_preprocessors` (nbgrader_config.py), starts it and
`Judge`, placed after, finishes it: the hidden cases need only the submitted source, so they run while the
notebook's kernel does, but for the timed cells (`Cell.timed`), judged last, once nothing else of the pair runs
(the kernel has its own uid and Triton cache: it runs code the scan never reads). For a notebook that has a unit judge (`course.judge.units`), it builds the student's
module from the solution cells, scans it, runs it in sandboxed children on seeded inputs, compares with float64
references here, and replaces each judged test cell's outputs by its report: nothing more for full marks, the
points as the cell's value for partial credit, an error for zero (nbgrader's own rule). What the notebook's kernel
printed or raised in that cell (the visible self-check) is kept as one line of the report, never as the grade.
The summary of each notebook (seeds, sandbox, flags, whether each judged property held, the seconds of its stages)
goes to `report_dir` for `course grade`.
"""

from __future__ import annotations

import atexit
import copy
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Unicode

import utils
from course.judge import feedback_html, restore, sandbox, triton_stats, units
from course.judge.child import Child
from course.judge.core import Unit, judge_cell, seed_for
from course.judge.kernel import RAN, SHARED, STAGES, cell_seconds
from course.judge.student_code import module_source, scan
from utils.messages import bilingual

FLAG_SELFCHECK = "self-check passed in the notebook but failed when judged"
FLAG_ALTERED = (
    "the test cell's nbgrader flags were changed in the submission (restored from the instructor's copy)"
)


def run_time_flag(made: list[str]) -> str:
    """Why a pair is to be reviewed whose code made code at run time in the judge's children (`made`: what,
    `utils.judged.run_time_code`): no text comparison reads what that code runs."""
    return bilingual(
        f"相似度：代码在评审子进程中于运行时生成并执行了代码（{'; '.join(made)}），它执行的内容不在比较之内，请复核",
        f"similarity: code made at run time, seen in the judge's child ({'; '.join(made)}): what it runs is not "
        "compared; review it",
    )


def memory_reset_flag(resets: int) -> str:
    """Why a pair is to be reviewed whose code tried to reset the GPU allocator's statistics during judged calls
    (`utils.judged.peak_guard`: ignored, the peak graded is the judge's)."""
    return bilingual(
        f"显存：学生代码在评审调用中 {resets} 次试图重置 GPU 分配器的统计（已忽略，峰值仍由评审测量），请复核",
        f"memory: the student's code tried to reset the GPU allocator's statistics {resets} times during judged "
        "calls (ignored: the peak is still the judge's measurement); review it",
    )


def kernel_summary(cell, ran: bool = True) -> tuple[bool | None, str]:
    """(passed, one line) of what the notebook's kernel showed in the test cell (its visible self-check); None where
    it never `ran` (a kernel that died before it)."""
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    if errors:
        return False, bilingual("笔记本中的自检：失败", "self-check in the notebook: failed") + (
            f" ({errors[0].get('ename', '')}: {str(errors[0].get('evalue', ''))[:200]})"
        )
    if not ran:
        return None, bilingual("笔记本中的自检：没有运行", "self-check in the notebook: did not run")
    return True, bilingual("笔记本中的自检：通过", "self-check in the notebook: passed")


def notebook_seconds(cell) -> float | None:
    """Seconds the notebook's kernel spent in `cell` (its visible self-check), None where it did not run it."""
    if "iopub.execute_input" not in cell.get("metadata", {}).get("execution", {}):
        return None
    return round(cell_seconds(cell), 1)


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


STARTED = "flash_course_judging"  # resources: the judging `StartJudge` began before the notebook ran


@dataclass
class Judged:
    """A notebook's cells judged, before the verdicts go into the cells: what `finish` needs."""

    mechanism: str
    reasons: list[str]  # flags that need no kernel: the scan, altered test cells
    verdicts: dict[str, dict]  # grade_id -> its verdict (`judge_cells`)
    stages: dict[str, float]  # seconds (and counts) of the judge's stages
    started: float = field(default_factory=time.monotonic)
    ended: float = 0.0

    def followed_by(self, later: Judged) -> Judged:
        """This judging with the verdicts (and any new reasons) of `later`, a judging of the same module's other
        cells."""
        self.verdicts |= later.verdicts
        self.reasons += [reason for reason in later.reasons if reason not in self.reasons]
        for name, value in later.stages.items():
            self.stages[name] = self.stages.get(name, 0.0) + value
        self.ended = later.ended
        return self


class Judge(NbGraderPreprocessor):
    """Judge every test cell that the notebook's unit judge knows, outside the student's code: finish the judging
    `StartJudge` began, else judge here."""

    enabled = Bool(True).tag(config=True)
    sandbox = Unicode(
        "auto",
        help="'auto' (bubblewrap or refused), 'allow-weaker', 'bubblewrap', 'namespaces' or 'none' (`sandbox.choose`)",
    ).tag(config=True)
    salt = Unicode("", help="grading-round salt of the seeds").tag(config=True)
    report_dir = Unicode("", help="folder for each judged notebook's summary (JSON)").tag(config=True)

    @staticmethod
    def unit_of(resources) -> Unit | None:
        return units.UNITS.get(f"{resources.get('nbgrader', {}).get('notebook', '')}.ipynb")

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader", {})
        feedback_html.forget_judged(nb)
        unit = self.unit_of(resources)
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
        waiting = time.monotonic()
        begun, shared, cache_stages = resources.pop(STARTED, None), resources.pop(SHARED, None), {}
        try:
            if begun is None:
                summary = judge_notebook(
                    nb, unit, info.get("student", ""), self.salt, self.sandbox, ran=resources.get(RAN)
                )
            else:  # the timed cells once the others are judged too: nothing else of this pair runs (`Cell.timed`)
                beside = begun.result()
                timed = judge_cells(
                    nb, unit, info.get("student", ""), self.salt, self.sandbox, shared=shared, timed=True
                )
                summary = finish(nb, beside.followed_by(timed), resources.get(RAN))
        finally:
            if shared is not None:  # the judge is done: its children's uid and cache end
                cache_stages = triton_stats.stages("pair", shared[1])
                end_sharing(*shared)
        stages = summary.get("stages", {}) | resources.get(STAGES, {}) | cache_stages
        stages["judge after the notebook"] = time.monotonic() - waiting  # what judging added to the wait
        summary["stages"] = {name: round(value, 2) for name, value in stages.items()}
        summary.update(
            student=info.get("student", ""),
            unit=info.get("assignment", ""),
            notebook=unit.notebook,
        )
        if self.report_dir:
            path = summary_path(Path(self.report_dir), summary["student"], summary["unit"], unit.notebook)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(summary, ensure_ascii=False, indent=1), encoding="utf-8")
        return nb, resources


class StartJudge(Judge):
    """Placed before the notebook's `Execute`: starts judging its cells on a thread, so the judge's children run
    while the notebook's kernel does (the hidden cases read only the submitted source: the module built from the
    solution cells); `Judge`, after `Execute`, waits for the verdicts, judges the timed cells and writes them all
    into the executed cells."""

    def preprocess(self, nb, resources):
        unit = self.unit_of(resources)
        if unit is None or not self.salt:  # `Judge` says why it cannot judge
            return nb, resources
        student = resources.get("nbgrader", {}).get("student", "")
        shared = resources[SHARED] = new_share()
        # also if the notebook's run fails before `Judge`
        atexit.register(sandbox.remove_workspace, shared[1])
        pool = ThreadPoolExecutor(1, thread_name_prefix="judge")
        resources[STARTED] = pool.submit(
            judge_cells, copy.deepcopy(nb), unit, student, self.salt, self.sandbox, shared=shared, timed=False
        )
        pool.shutdown(wait=False)
        return nb, resources


def judge_notebook(
    nb,
    unit: Unit,
    student: str,
    salt: str,
    requested_sandbox: str,
    parallel_cells: int | None = None,
    ran: set[int] | None = None,
) -> dict:
    """Judge the notebook's cells in place, `parallel_cells` at once (default: the unit's choice on a GPU, else
    1); return the summary (scores, seeds, sandbox, flags, and whether each cell's visible self-check passed in
    the notebook: `finish`)."""
    return finish(nb, judge_cells(nb, unit, student, salt, requested_sandbox, parallel_cells), ran)


def judge_cells(
    nb,
    unit: Unit,
    student: str,
    salt: str,
    requested_sandbox: str,
    parallel_cells: int | None = None,
    shared: tuple[int, Path] | None = None,
    timed: bool | None = None,
) -> Judged:
    """Run the judge of every graded cell of `nb` that `unit` knows, on the module built from its solution cells
    (what the notebook's kernel printed is not needed: `finish` reads it). Its children run as a uid of their own
    with a Triton cache of their own, or as the `shared` (uid, cache) `StartJudge` made, which `Judge` ends (never
    the notebook's kernel's: code the scan never reads would plant there what the children load). `timed`: only
    the cells that are (True) or are not (False) `Cell.timed`; None: all."""
    judged = Judged(sandbox.choose(requested_sandbox)[0], [], {}, {})
    source = module_source(nb, unit.student_cells, unit.preamble)
    findings = scan(source, unit.banned, unit.suspicious)
    uses_library = [f for f in findings if f.kind == "attention"]
    judged.reasons += [str(f) for f in findings]
    judged.reasons += [f"{gid}: {FLAG_ALTERED}" for gid in nb.metadata.get(restore.ALTERED, [])]
    on_gpu = utils.mode().is_gpu
    parallel_cells = parallel_cells or (unit.parallel_cells_on_gpu if on_gpu else 1)
    settings = {"banned": unit.banned, "ban_fused_attention": True}
    owner, triton_cache = shared or new_share()  # one uid for this notebook's children and their cache
    children, children_lock, mine = [], threading.Lock(), threading.local()

    def child() -> Child:
        """This thread's child (one per thread; the children of a notebook share one Triton cache)."""
        if not hasattr(mine, "child"):
            mine.child = Child(source, settings, judged.mechanism, triton_cache=triton_cache, owner=owner)
            with children_lock:
                children.append(mine.child)
        return mine.child

    def judge_one(cell) -> dict:
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        started = time.monotonic()
        seed = seed_for(salt, student, unit.notebook, grade_id)
        verdict = {"grade_id": grade_id, "seed": seed, "points": points_of(cell), "judged": True}
        verdict |= {"properties": {}, "weights": {}}
        if uses_library:
            verdict["score"] = 0.0
            verdict["report"] = "\n".join(
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
            weights = judgement.judged_properties()
            verdict["judged"], verdict["weights"] = bool(weights), weights
            verdict["properties"] = {prop: judgement.passed(prop) for prop in weights}
            verdict["score"] = round(verdict["points"] * judgement.share(), 2)
            verdict["report"] = judgement.report(verdict["points"], verdict["score"])
            verdict["selfcheck_failed"] = judge.selfcheck in weights and not judgement.passed(judge.selfcheck)
        verdict["seconds"] = round(time.monotonic() - started, 1)
        return verdict

    def judge_group(group: list) -> list[dict]:
        return [judge_one(cell) for cell in group]

    cells = [
        cell
        for cell in nb.cells
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") in unit.cells
        and cell.metadata["nbgrader"].get("grade")
        and timed in (None, unit.cells[cell.metadata["nbgrader"]["grade_id"]].timed)
    ]
    try:
        with ThreadPoolExecutor(parallel_cells) as pool:
            verdicts = [v for group in pool.map(judge_group, cell_groups(unit, cells)) for v in group]
    finally:
        for each in children:
            each.close()
        if shared is None:  # else `Judge` ends them
            judged.stages |= triton_stats.stages("judge", triton_cache)
            end_sharing(owner, triton_cache)
    judged.stages |= {"judge child start": sum(each.start_seconds for each in children)}
    if made := sorted(set().union(*(each.run_time_code for each in children))):
        judged.reasons.append(run_time_flag(made))
    if resets := sum(each.memory_resets for each in children):
        judged.reasons.append(memory_reset_flag(resets))
    judged.verdicts = {verdict["grade_id"]: verdict for verdict in verdicts}
    judged.ended = time.monotonic()
    return judged


def new_share() -> tuple[int, Path]:
    """A fresh uid for a notebook's judge children and the Triton cache they share (`end_sharing` ends both)."""
    owner = sandbox.new_owner()
    return owner, sandbox.shared_folder("course-triton-", owner)


def end_sharing(owner: int, triton_cache: Path) -> None:
    """Kill what still runs as the judge children's uid (what left its session and process group) and delete their
    Triton cache: nothing of one student's grading is left for another's."""
    sandbox.kill_processes_of(owner)
    sandbox.remove_workspace(triton_cache)


def cell_groups(unit: Unit, cells: list) -> list[list]:
    """The cells in groups, each judged cell after cell in one child: a cell joins the group of the cell it is
    judged `after`; the groups keep the notebook's order."""
    groups: dict[str, list] = {}
    for cell in cells:
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        groups.setdefault(unit.cells[grade_id].after or grade_id, []).append(cell)
    return list(groups.values())


def finish(nb, judged: Judged, ran: set[int] | None = None) -> dict:
    """Write each judged cell's verdict into `nb` (the notebook as its kernel ran it: what the visible self-check
    showed goes into the report, and a self-check that passed there but failed when judged is flagged); return the
    summary. `ran`: where the grader ran `nb`, the indices of the cells its kernel ran (`kernel.RAN`): a test cell
    not among them never ran."""
    summary = {"scores": {}, "seeds": {}, "selfchecks": {}, "cell_seconds": {}, "selfcheck_seconds": {}}
    summary["properties"] = {}  # grade_id -> {property: passed}, of the properties judged here
    reasons = list(judged.reasons)
    for index, cell in enumerate(nb.cells):
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        verdict = judged.verdicts.get(grade_id)
        if verdict is None:
            continue
        kernel_passed, kernel_line = kernel_summary(cell, ran is None or index in ran)
        header = f"{kernel_line}\n{bilingual('种子', 'seed')} {verdict['seed']} · sandbox {judged.mechanism}"
        cell.outputs = verdict_outputs(
            f"{header}\n{verdict['report']}", verdict["score"], verdict["points"], judged=verdict["judged"]
        )
        summary["scores"][grade_id] = [verdict["score"], verdict["points"]]
        summary["properties"][grade_id] = verdict["properties"]
        feedback_html.record_judged(cell, verdict["weights"], verdict["properties"])
        summary["seeds"][grade_id] = verdict["seed"]
        summary["selfchecks"][grade_id] = kernel_passed
        summary["cell_seconds"][grade_id] = verdict["seconds"]
        if (seconds := notebook_seconds(cell)) is not None:
            summary["selfcheck_seconds"][grade_id] = seconds
        if kernel_passed and verdict.get("selfcheck_failed"):
            reasons.append(f"{grade_id}: {FLAG_SELFCHECK}")
    summary["stages"] = dict(judged.stages)
    summary["seconds"] = round(
        judged.ended - judged.started, 1
    )  # the judging's own time (beside the notebook)
    return {**summary, "sandbox": judged.mechanism, "flagged": bool(reasons), "reasons": reasons}
