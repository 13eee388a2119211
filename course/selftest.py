"""`python -m course selftest [UNIT…]`: prove that the graders discriminate.

For every unit: the source notebooks (reference solutions) must score full marks, the untouched release
(stubs) must score 0 on every test cell, every wrong implementation in `course/wrong/<unit>/` must lose
points on each test cell it names (and fail the visible self-check of each cell its `selftest-selfcheck-fails`
header names), and every legitimate variant in `course/variants/<unit>/` must keep full
marks. Each graded exercise needs at least three wrong implementations, and five variants where the unit has
a variants folder. With `--red-team`, every attack in `course/redteam/<unit>/` must earn no more than its caps
(its honest score) and be flagged (or not) as its header says.

Test cells marked GPU-only (`notebooks.is_gpu_only`) are skipped without a GPU: there they must score 0 for
every case, the solution included, and they are left out of the full-marks check. On a GPU they are graded
like every other cell.

Speed: the fake students of one notebook are graded in `--jobs` nbgrader runs (a kernel death only fails
that student), spread over as many scratch course roots in parallel. A run that exceeds its wall-clock
limit is redone one student per process, so a hang is pinned on the student who caused it.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from course import leaks, notebooks, release, wrong
from course.grading import grade
from course.grading.pool import Job, LocalPool, NotGraded, open_pool
from course.judge import sandbox
from course.layout import COURSE, Course
from utils.messages import bilingual

MIN_WRONG = 3
MIN_VARIANTS = 5
ERROR = re.compile(r"[\w.]*(Error|Exception|Exit|Interrupt)\b")  # a traceback's last line: "ValueError: …"


@dataclass
class Case:
    """One fake student's notebook and what its grade must show."""

    unit: str
    notebook: str
    student: str
    kind: str  # "solution", "variant", "stubs", "wrong" or "redteam"
    submission: object  # the notebook to hand in
    must_fail: tuple[str, ...] = ()
    selfcheck_fails: tuple[str, ...] = ()  # test cells whose visible self-check must fail in the notebook
    attack: wrong.WrongImpl | None = None  # a red-team case's caps and flag
    result: dict = field(default_factory=dict)  # {"status": …, "scores": {grade_id: [score, max]}}

    def verdict(self, tests: dict[str, float], skipped: frozenset[str] = frozenset()) -> str | None:
        """None when the grade is as expected, else what went wrong.

        `skipped`: GPU-only test cells graded without a GPU: they must score 0 and earn no full marks.
        """
        status, scores = self.result.get("status", "not graded"), self.result.get("scores", {})
        shown = self.status_and_cause()
        scored_skipped = [g for g in sorted(skipped) if scores.get(g, [0.0])[0] > 0]
        if scored_skipped:
            return f"GPU-only cells score without a GPU: {scored_skipped}"
        if self.kind == "redteam":
            return self.attack_verdict(scores)
        if self.kind in ("solution", "variant"):
            short = [g for g, pts in tests.items() if g not in skipped and scores.get(g, [0.0])[0] < pts]
            if status != "graded" or short:
                return f"{shown}; not full marks: {short}" if short else shown
        elif self.kind == "stubs":
            scored = [g for g in tests if scores.get(g, [0.0])[0] > 0]
            if scored:
                return f"stubs earn points on {scored}"
        else:
            kept = [g for g in self.must_fail if g not in tests or scores.get(g, [0.0])[0] >= tests[g]]
            if kept:
                return f"does not lose points on {kept} ({shown})"
            selfchecks = (self.result.get("judge") or {}).get("selfchecks", {})
            if unrun := [g for g in self.selfcheck_fails if g in selfchecks and selfchecks[g] is None]:
                return f"the visible self-check did not run on {unrun} ({shown})"
            unnoticed = [g for g in self.selfcheck_fails if selfchecks.get(g, True)]
            if unnoticed:
                return f"the visible self-check passes on {unnoticed}"
        return None

    def status_and_cause(self) -> str:
        """The grading status, with the cause where the notebook was not graded: "error (ValueError: …)"."""
        status, log = self.result.get("status", "not graded"), self.result.get("log", "")
        return f"{status} ({cause(log)})" if status != "graded" and log else status

    def attack_verdict(self, scores: dict) -> str | None:
        """Leaks (`course.leaks`), over its caps, or flagged other than expected; a residual-risk attack (it forges
        signals that only the student's own process can report, see the threat model) need only be flagged."""
        if self.result.get("leaks"):
            return f"leaks: {'; '.join(self.result['leaks'])}"
        flagged = bool((self.result.get("judge") or {}).get("flagged"))
        if self.attack.residual:
            return None if flagged else f"residual-risk attack not flagged ({self.attack.residual})"
        over = [
            f"{g} {scores[g][0]:g} > {cap:g}"
            for g, cap in self.attack.caps.items()
            if scores.get(g, [0.0])[0] > cap
        ]
        if over:
            return f"earns more than its honest score: {', '.join(over)}"
        if self.attack.flagged is not None and flagged != self.attack.flagged:
            return "not flagged" if self.attack.flagged else "flagged without reason"
        return None


def static_problems(
    course: Course, unit: str, impls: list[wrong.WrongImpl], variants: list[wrong.WrongImpl] = ()
) -> list[str]:
    """Header mistakes, exercises with fewer than MIN_WRONG wrong implementations, and (where the unit has a
    variants folder) fewer than MIN_VARIANTS variants."""
    problems = []
    sources = {nb: notebooks.read(course.source / unit / nb) for nb in course.notebooks(unit)}
    for impl in impls:
        nb = sources.get(impl.notebook)
        if nb is None:
            problems.append(f"{impl.path.name}: no notebook {impl.notebook} in {unit}")
            continue
        if impl.replaces not in notebooks.solution_cells(nb):
            problems.append(f"{impl.path.name}: {impl.replaces} is not a solution cell of {impl.notebook}")
        unknown = [g for g in impl.must_fail if g not in notebooks.test_cells(nb)]
        if unknown:
            problems.append(f"{impl.path.name}: {unknown} are not test cells of {impl.notebook}")
        unlisted = [g for g in impl.selfcheck_fails if g not in impl.must_fail]
        if unlisted:
            problems.append(f"{impl.path.name}: selfcheck-fails {unlisted} are not in its must-fail")
    for impl in variants:
        if impl.notebook not in sources or impl.replaces not in notebooks.solution_cells(
            sources[impl.notebook]
        ):
            problems.append(f"{impl.path.name}: {impl.replaces} is not a solution cell of {impl.notebook}")
    for name, nb in sources.items():
        tests = notebooks.test_cells(nb)
        for index, cell in enumerate(nb.cells):
            if notebooks.is_gpu_only(cell) and cell not in tests.values():
                problems.append(f"{unit}/{name}: cell {index} is marked GPU-only but is not a test cell")
        for gid in notebooks.solution_cells(nb):
            count = sum(1 for i in impls if i.notebook == name and i.replaces == gid)
            if count < MIN_WRONG:
                problems.append(
                    f"{unit}/{name}: exercise {gid} has {count} wrong implementations (< {MIN_WRONG})"
                )
            count = sum(1 for i in variants if i.notebook == name and i.replaces == gid)
            if (course.variants / unit).is_dir() and count < MIN_VARIANTS:
                problems.append(f"{unit}/{name}: exercise {gid} has {count} variants (< {MIN_VARIANTS})")
    return problems


def replaced(source, impl: wrong.WrongImpl):
    """The source notebook with one solution cell replaced (any test cells the attack deletes removed, any it
    re-tags made ungraded cells that print "ok")."""
    changed = notebooks.with_cell(source, impl.replaces, impl.body)
    changed.cells = [c for c in changed.cells if notebooks.meta(c).get("grade_id") not in impl.delete]
    for cell in changed.cells:
        if notebooks.meta(cell).get("grade_id") in impl.retag:
            cell.metadata["nbgrader"] = {**notebooks.meta(cell), "grade": False, "locked": False, "points": 0}
            cell.source = 'print("ok")'
    return changed


def cases_for(
    course: Course,
    unit: str,
    release_root: Path,
    impls: list[wrong.WrongImpl],
    extra: list[wrong.WrongImpl] = (),
) -> list[Case]:
    """The unit's cases: solution, stubs, each wrong implementation, and each variant or attack in `extra`."""
    cases = []
    for nb_name in course.notebooks(unit):
        source = notebooks.read(course.source / unit / nb_name)
        cases.append(Case(unit, nb_name, "solution", "solution", source))
        cases.append(Case(unit, nb_name, "stubs", "stubs", notebooks.read(release_root / unit / nb_name)))
        for impl in impls:
            if impl.notebook == nb_name and impl.replaces in notebooks.solution_cells(source):
                cases.append(
                    Case(
                        unit,
                        nb_name,
                        f"wrong-{impl.name}",
                        "wrong",
                        replaced(source, impl),
                        impl.must_fail,
                        impl.selfcheck_fails,
                    )
                )
        for impl in extra:
            if impl.notebook == nb_name and impl.replaces in notebooks.solution_cells(source):
                kind = "redteam" if impl.caps is not None else "variant"
                cases.append(
                    Case(unit, nb_name, f"{kind}-{impl.name}", kind, replaced(source, impl), attack=impl)
                )
    return cases


def cause(log: str) -> str:
    """Why a notebook was not graded, in one line: the last error in its log (else the log's last line)."""
    lines = [line.strip() for line in log.splitlines() if line.strip()] or [""]
    return next((line for line in reversed(lines) if ERROR.match(line)), lines[-1])[:200]


def run_slot(
    course: Course,
    root: Path,
    units: list[str],
    queue: deque,
    timeout: float,
    progress,
    where=None,
    at_once=1,
) -> None:
    """Set up the scratch course root `root` for `units`, then grade (unit, notebook) groups of cases taken from
    `queue` until it is empty (so no slot idles while another has work left), here or in `where` (a Ray cluster,
    `course.grading.pool`), one of `at_once` slots."""
    slot = Course(root, course.wrong)
    for unit in units:
        shutil.copytree(course.source / unit, slot.source / unit)
    grade.register_units(slot, units)
    while True:
        try:
            group = queue.popleft()  # atomic: the slots share the queue
        except IndexError:
            return
        grade_group(course, slot, group, timeout, progress, where, at_once)


def grade_group(
    course: Course, slot: Course, group: list[Case], timeout: float, progress, where, at_once: int = 1
) -> None:
    """Grade one (unit, notebook) group of cases in `slot` with its grading salt; red-team cases get their
    feedback HTML, and what it and their graded notebook show is checked for leaks (of the salt and of the canary
    token planted in the slot's root, see `course.leaks`)."""
    root = slot.root
    unit, nb_name = group[0].unit, group[0].notebook
    for case in group:
        notebooks.write(case.submission, slot.submitted / case.student / unit / nb_name)
    request = {
        "action": "autograde",
        "root": str(root),
        "unit": unit,
        "student": "*",
        "notebooks": [nb_name],
        "salt": grade.grading_salt(slot),
        "feedback": [case.student for case in group if case.kind == "redteam"],
    }
    log = root / "selftest.log"
    logged = log.stat().st_size if log.exists() else 0
    students = [case.student for case in group]
    results, timed_out = run_in(where, slot, unit, students, request, timeout * len(group), log, at_once)
    for case in group:
        if timed_out and nb_name not in results.get(case.student, {}):
            alone = {**request, "student": case.student}
            one, hung = run_in(where, slot, unit, [case.student], alone, timeout, log, at_once)
            results[case.student] = one.get(case.student) or {
                nb_name: {"status": "timeout" if hung else "error"}
            }
        case.result = results.get(case.student, {}).get(nb_name, {"status": "error"})
        if case.kind == "redteam":
            graded = slot.autograded / case.student / unit / nb_name
            feedback = (slot.feedback / case.student / unit / nb_name).with_suffix(".html")
            secret = {"the grading salt": request["salt"], "the canary token": leaks.canary_in(root)}
            case.result["leaks"] = leaks.found(graded, feedback, secret)
        if case.result["status"] != "graded" and "log" not in case.result:  # the job's log says why
            case.result["log"] = log.read_bytes()[logged:][-4000:].decode(errors="replace")
        verdict = case.verdict(points(course, unit, nb_name), skipped(course, unit, nb_name))
        progress.write(
            f"{'✓' if verdict is None else '✗'} {unit}/{nb_name} {case.student} {verdict or ''}".rstrip()
        )
        shutil.rmtree(slot.submitted / case.student / unit)  # the slot's next job of this notebook grades "*"
    progress.update(len(group))


def run_in(
    where,
    slot: Course,
    unit: str,
    students: list[str],
    request: dict,
    timeout: float,
    log: Path,
    at_once: int = 1,
):
    """(results, timed_out) of one autograde job of `students`' `unit` in the scratch course `slot`, run here or in
    `where` (its files go to a node and what it writes comes back); a job no node finished has no results."""
    job = Job(
        request,
        timeout,
        log,
        at_once=at_once,
        inputs=(slot.source / unit, *(slot.submitted / s / unit for s in students), slot.gradebook),
        outputs=(
            *(slot.autograded / s / unit for s in students),
            *(slot.feedback / s / unit for s in students),
            slot.gradebook,
        ),
    )
    try:
        results, timed_out, _ = (where or LocalPool()).run(job)
    except NotGraded:
        return {}, False
    return results, timed_out


def split_groups(cases: list[Case], jobs: int) -> list[list[Case]]:
    """Cases grouped by (unit, notebook), each group cut into `jobs` parts so every slot gets work."""
    groups: dict[tuple[str, str], list[Case]] = {}
    for case in cases:
        groups.setdefault((case.unit, case.notebook), []).append(case)
    parts = max(1, jobs)
    return [group[i::parts] for group in groups.values() for i in range(parts) if group[i::parts]]


def covering(impls: list[wrong.WrongImpl], test_cells: list[str]) -> list[wrong.WrongImpl]:
    """A sample of `impls` in which every test cell that some implementation must fail is failed by one (the
    first such, by file name)."""
    chosen: list[wrong.WrongImpl] = []
    for cell in test_cells:
        first = next((impl for impl in impls if cell in impl.must_fail), None)
        if first is not None and first not in chosen:
            chosen.append(first)
    return chosen


def one_per_exercise(variants: list[wrong.WrongImpl]) -> list[wrong.WrongImpl]:
    """The first variant of each replaced solution cell."""
    first: dict[tuple[str, str], wrong.WrongImpl] = {}
    for variant in variants:
        first.setdefault((variant.notebook, variant.replaces), variant)
    return list(first.values())


def one_per_class(attacks: list[wrong.WrongImpl], seen: set[str]) -> list[wrong.WrongImpl]:
    """The attacks of a kind not in `seen` (the first of each, by file name); `seen` gains their kinds."""
    chosen = []
    for attack in attacks:
        if attack.attack_class not in seen:
            seen.add(attack.attack_class)
            chosen.append(attack)
    return chosen


def run(
    course: Course,
    units: list[str],
    jobs: int = 2,
    timeout: float | None = None,
    red_team: bool = False,
    sample: bool = False,
    attacks_only: bool = False,
    ray: str | None = None,
) -> tuple[list[Case], list[str]]:
    """Every case graded, and every problem found (empty when the graders discriminate as they should).

    `sample`: the quick set CI runs on a CPU: wrong implementations that cover every test cell once, one
    legitimate variant per exercise and one attack of each kind (`selftest-class`, in the first unit that has
    one; the red team's defences are the judge's and the sandbox's, shared by every unit); the full set runs on
    the GPU host. `attacks_only`: the solution, the stubs and the attacks, none of the wrong implementations
    and variants (the red team alone, e.g. on the GPU host when its time is short). `ray`: grade on that Ray
    cluster, as many slots at once as it runs (at least `jobs`)."""
    timeout = timeout or grade.default_timeout()
    sandbox.choose("auto")  # no allow-list sandbox here: refused with the reason before anything is graded
    problems, cases = [], []
    attack_classes: set[str] = set()
    with open_pool(ray) as where, tempfile.TemporaryDirectory(prefix="course-selftest-") as tmp:
        jobs = max(jobs, where.slots or 0)
        scratch = Path(tmp)
        release.build(course, units, scratch / "release")
        for unit in units:
            impls = wrong.load(course.wrong / unit)
            variants = wrong.load(course.variants / unit, "variant")
            attacks = wrong.load(course.redteam / unit, "redteam") if red_team or attacks_only else []
            problems += static_problems(course, unit, impls, variants)
            if attacks_only:
                impls, variants = [], []
            if sample:
                cells = [g for nb in course.notebooks(unit) for g in points(course, unit, nb)]
                impls, variants = covering(impls, cells), one_per_exercise(variants)
                attacks = one_per_class(attacks, attack_classes)
            cases += cases_for(course, unit, scratch / "release", impls, [*variants, *attacks])
        queue = deque(sorted(split_groups(cases, jobs), key=len, reverse=True))  # the largest first
        roots = [scratch / f"slot{i}" for i in range(max(1, min(jobs, len(queue))))]
        run_units = sorted({case.unit for case in cases})
        red_team_cases = any(case.kind == "redteam" for case in cases)
        planted = leaks.canaries(roots) if red_team_cases else contextlib.nullcontext()
        with (
            planted,
            tqdm(total=len(cases), desc=bilingual("自检", "selftest"), unit="case") as progress,
            ThreadPoolExecutor(len(roots)) as pool,
        ):
            futures = [
                pool.submit(run_slot, course, root, run_units, queue, timeout, progress, where, len(roots))
                for root in roots
            ]
            for future in futures:
                future.result()
    return cases, problems


def points(course: Course, unit: str, nb_name: str) -> dict[str, float]:
    return notebooks.graded_points(notebooks.read(course.source / unit / nb_name))


def skipped(course: Course, unit: str, nb_name: str) -> frozenset[str]:
    """The notebook's GPU-only test cells when grading without a GPU (they cannot earn points); else none."""
    return frozenset(grade.unawardable(course, unit, nb_name))


def caught_visibly(case: Case) -> bool:
    """A wrong implementation whose notebook shows the mistake: the visible self-check of a test cell it must fail
    fails (or errors) when the notebook runs."""
    selfchecks = (case.result.get("judge") or {}).get("selfchecks", {})
    return any(selfchecks.get(g) is False for g in case.must_fail)


def visible_catch(cases: list[Case]) -> dict[str, tuple[int, list[str]]]:
    """Per unit: (how many of its graded wrong implementations the visible self-checks catch, the names of those
    they miss). Cases that were not graded are left out."""
    catch: dict[str, tuple[int, list[str]]] = {}
    for case in cases:
        if case.kind != "wrong" or case.result.get("status") != "graded":
            continue
        caught, missed = catch.get(case.unit, (0, []))
        if caught_visibly(case):
            caught += 1
        else:
            missed = [*missed, case.student.removeprefix("wrong-")]
        catch[case.unit] = (caught, missed)
    return catch


def print_visible_catch(cases: list[Case]) -> None:
    """One line per unit: the share of wrong implementations the student would see fail in the notebook."""
    for unit, (caught, missed) in sorted(visible_catch(cases).items()):
        total = caught + len(missed)
        print(
            bilingual(
                f"{unit}：可见自检发现 {caught}/{total} 个错误实现（{caught / total:.0%}）",
                f"{unit}: the visible self-checks catch {caught} of {total} wrong implementations "
                f"({caught / total:.0%})",
            )
        )
        if missed:
            print(f"    {bilingual('未发现', 'missed')}: {', '.join(missed)}")


def report(course: Course, cases: list[Case], problems: list[str]) -> int:
    """Print the table; the number of surprises."""
    surprises = len(problems)
    header = (
        "单元 Unit",
        "笔记本 Notebook",
        "学生 Student",
        "结果 Result",
        "跳过（仅 GPU）Skipped (GPU-only)",
    )
    lines = []
    for case in cases:
        gpu_only = skipped(course, case.unit, case.notebook)
        verdict = case.verdict(points(course, case.unit, case.notebook), gpu_only)
        surprises += verdict is not None
        result = "✓" if verdict is None else f"✗ {verdict}"
        lines.append((case.unit, case.notebook, case.student, result, ", ".join(sorted(gpu_only))))
    widths = [max(len(x) for x in column) for column in zip(header, *lines, strict=False)]
    for line in [header, *lines]:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False)).rstrip())
    if any(line[-1] for line in lines):
        print(
            bilingual(
                "没有 GPU：仅 GPU 的测试单元格应得 0 分，不计入满分检查（在 GPU 上运行 selftest 才会真正评判它们）",
                "no GPU: GPU-only test cells must score 0 and are left out of the full-marks check "
                "(run selftest on a GPU to really grade them)",
            )
        )
    print_visible_catch(cases)
    for problem in problems:
        print(f"✗ {problem}")
    if surprises:
        print(bilingual(f"自检失败：{surprises} 处意外", f"selftest FAILED: {surprises} surprise(s)"))
    else:
        print(bilingual(f"自检通过：{len(cases)} 个用例", f"selftest passed: {len(cases)} case(s)"))
    return surprises


def main(
    names: list[str] | None,
    jobs: int = 2,
    timeout: float | None = None,
    course: Course = COURSE,
    red_team: bool = False,
    sample: bool = False,
    attacks_only: bool = False,
    ray: str | None = None,
) -> int:
    units = course.select(names)
    if not units:
        print(bilingual("source/ 中还没有单元", "no units in source/ yet"))
        return 0
    cases, problems = run(course, units, jobs, timeout, red_team, sample, attacks_only, ray)
    return 1 if report(course, cases, problems) else 0
