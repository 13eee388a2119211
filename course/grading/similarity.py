"""`python -m course similarity [SUBMISSIONS]`: students' code compared with each other's and with the course's.

For each unit, each student's solution cells (the graded exercises, as the judge reads them) are compared with
every other student's and with the reference solutions (the source notebooks' solution cells and the modules
of `course/reference/`), by copydetect (winnowed fingerprints of the tokenised code: renaming variables or
functions, changing comments or spacing does not hide a copy); what the release gives every student (the
cells' signatures and docstrings) is left out. The HTML report goes to `similarity/<unit>/report.html` in the
course root; a student whose code matches another's, or the reference, above the threshold is flagged for
review in grades.csv (`flag_reasons`), never marked down: short exercises can look alike by honest work, and
only a person decides. Code made at run time, which no comparison reads, and code too long to compare in bounded
time (over CODE_LIMIT characters) are flagged for review too. The flag stays while the student's solution cells stay as they were checked (a later
`course grade` keeps it; a changed submission drops it until the next check).
"""

from __future__ import annotations

import ast
import csv
import hashlib
import html
import io
import json
import re
import shutil
import tokenize
import zipfile
from collections import Counter
from dataclasses import dataclass
from importlib.machinery import BYTECODE_SUFFIXES, EXTENSION_SUFFIXES
from pathlib import Path

import numpy as np

from course import notebooks
from course.grading import intake
from course.grading.atomic import replace_csv, replace_text
from course.grading.lock import grading_lock
from course.judge.student_code import _string, parsed, scan, solution_sources
from course.layout import Course
from course.neutral import visible
from utils.messages import bilingual

DEFAULT_THRESHOLD = 0.8  # share of a student's code found in another's (copydetect's similarity)
FOLDER = "similarity"
FLAGS_FILE = "flags.json"  # "student/unit" -> {"code": digest of the code checked, "reasons": [...]}
RUN_TIME_NAMES = (  # names that make code at run time from data: what a packed string runs, no comparison reads
    *("compile", "exec", "eval", "__import__", "importlib", "marshal", "pickle", "dill", "builtins"),
    *("zlib", "base64", "binascii", "codecs", "bz2", "lzma", "gzip"),  # unpacking the string
    "runpy",  # runs a file of any name, which the check does not read
    *(
        "imp",
        "load_source",
        "load_module",
        "exec_module",
        "get_code",
        "source_to_code",
    ),  # so does a module loader
)
RUN_TIME_CODE = {name: name for name in RUN_TIME_NAMES} | {  # {name in the code: as the reason names it}
    "__builtins__": "builtins",
    "FunctionType": "types.FunctionType",
    "CodeType": "types.CodeType",
    "__code__": "__code__",
    "run_cell": "IPython's run_cell",
    "run_code": "IPython's run_code",
    "__self__": "builtins",  # print.__self__ is the builtins module
    "__globals__": "builtins",  # f.__globals__["__builtins__"]
    "__subclasses__": "builtins",  # ().__class__.__base__.__subclasses__(): every class, their modules
    "add_safe_globals": "pickle",  # lets torch.load's unpickler call what it names
    "safe_globals": "pickle",
    "CompilationUnit": "TorchScript from a string",  # torch compiles it: the judge's hook sees nothing
    "get_objects": "gc",  # every object: the judge's audit hook too, found to blind it
    "get_referrers": "gc",
    "get_referents": "gc",
}
UNPICKLING = {"weights_only": True, "allow_pickle": False}  # torch.load's, numpy's load: unpickles unless so
LOOKUPS = {  # calls that look an attribute up by the name they are passed: {function: the names' arguments}
    "getattr": slice(1, 2),
    "attrgetter": slice(None),
    "methodcaller": slice(0, 1),
    "__getattribute__": slice(-1, None),
}
COMPUTED = "an attribute looked up by a computed name"
UNREAD = "compiled code or a zip archive, not read"
REASON_PLACES = (
    5  # cells or files a reason names (one student's 1,000 files made a 400 KB cell of grades.csv)
)
# Characters of one student's code of a unit that are compared and scanned: lexing and walking the code costs some
# 30 µs a character (1 MiB: about half a minute); honest code is under 100 KB, and longer code is flagged unread
CODE_LIMIT = 1 << 20
QUOTED = 20_000  # characters of one student's (or reference's) code the report quotes in one pair
PAIRS_QUOTED = 5  # pairs the report quotes for one student, the closest first (the flags count them all)
# A line IPython runs as a magic or shell command (`%time f()`, `x = !ls`): the text it runs after the name
MAGIC_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?:[\w.\[\], ]+=[ \t]*)?(?P<escape>%%?|!!?)\S*[ \t]?(?P<text>.*)$", re.M
)
MAGIC_DEPTH = 5  # magics within magics read (`%time %time exec(…)`); deeper ones flag the cell
MAGICS_READ = (
    101  # texts read of one cell: itself and 100 magics; a cell of more is flagged (no answer needs them)
)
SHELL = "shell commands (!)"


def solution_ids(course: Course, unit: str, notebook: str) -> list[str]:
    return list(notebooks.solution_cells(notebooks.read(course.source / unit / notebook)))


def student_cells(course: Course, folder: Path, student: str, unit: str) -> list[tuple[str, str, str]]:
    """(notebook, grade_id, source) of the student's solution cells of the unit, notebook after notebook, then
    (file, "", source) of each Python file handed in beside them (a solution cell can import it, and it runs)."""
    found = []
    for notebook in course.notebooks(unit):
        path = folder / student / unit / notebook
        if not path.is_file():
            continue
        try:
            sources = solution_sources(notebooks.read(path), solution_ids(course, unit, notebook))
        except Exception:  # noqa: BLE001 (not a notebook: intake refuses it, nothing to compare)
            continue
        found += [(notebook, gid, source) for gid, source in sources]
    handed_in = folder / student / unit
    for path in sorted(handed_in.rglob("*.py")):
        if path.is_file() and not path.is_symlink():
            name = visible(path.relative_to(handed_in).as_posix())
            found.append((name, "", python_text(path)))
    return found


def python_text(path: Path) -> str:
    """A Python file's text as Python reads it: in the encoding its first lines declare (`# coding: utf-7` hides
    the letters from a reader of UTF-8), else UTF-8."""
    data = path.read_bytes()
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding, errors="replace")
    except (SyntaxError, LookupError):  # an encoding Python refuses: the file does not run
        return data.decode("utf-8", errors="replace")


def student_code(course: Course, folder: Path, student: str, unit: str) -> str:
    """The student's solution cells of the unit as one text ("" when none is found)."""
    return joined(student_cells(course, folder, student, unit))


def joined(cells: list[tuple[str, str, str]]) -> str:
    return "\n".join(f"# --- {notebook} {gid}\n{source.rstrip()}\n" for notebook, gid, source in cells)


def too_long_reason(code: str) -> str | None:
    """Why the code is to be reviewed unread, being over CODE_LIMIT; None: it is not."""
    if len(code) <= CODE_LIMIT:
        return None
    return bilingual(
        f"相似度：代码太长（{len(code):,} 个字符，上限 {CODE_LIMIT:,}），没有比较也没有检查，请复核",
        f"similarity: the code is too long to compare ({len(code):,} characters, at most {CODE_LIMIT:,}): neither "
        "compared nor scanned; review it",
    )


def made_at_run_time(source: str) -> set[str]:
    """The names of RUN_TIME_CODE one cell uses, read as IPython runs it: what each magic runs is read too (IPython's
    own transformer takes minutes on a cell of a few thousand magics: these are read line by line)."""
    found, pending, read = set(), [(source, 0)], 0
    while pending:
        text, depth = pending.pop()
        read += 1
        if read > MAGICS_READ:
            found.add(f"over {MAGICS_READ - 1} IPython magics")
            break
        if depth > MAGIC_DEPTH:
            found.add(f"IPython magics nested over {MAGIC_DEPTH} deep")
            continue
        head, _, body = text.lstrip().partition("\n")
        if head.startswith("%%"):  # a cell magic: its body runs (`%%time`, `%%capture`, …)
            pending += [(head.lstrip("%").partition(" ")[2], depth + 1), (body, depth + 1)]
            continue
        code = MAGIC_LINE.sub(blank_magic, text)
        findings = scan(code, suspicious=RUN_TIME_CODE)
        found |= {f.what for f in findings if f.what in RUN_TIME_CODE.values()} | computed_names(code)
        for line in MAGIC_LINE.finditer(text):
            if line["escape"].startswith("!"):
                found.add(SHELL)
            pending.append((line["text"], depth + 1))
    return found


def computed_names(code: str) -> set[str]:
    """What `code` looks up by a name no reader sees: an attribute by a computed name (`getattr(m, "cexe"[::-1])`),
    an item named like RUN_TIME_CODE (`vars(math)["__builtins__"]`); and a load that unpickles (runs what the file
    names: `torch.load(p, weights_only=False)`, `np.load(p, allow_pickle=True)`)."""
    found = set()
    for node in ast.walk(parsed(code) or ast.Module(body=[], type_ignores=[])):
        function = getattr(node, "func", None)
        called = getattr(function, "id", None) or getattr(function, "attr", None)
        if called in LOOKUPS and not all(_string(name) for name in node.args[LOOKUPS[called]] or [None]):
            found.add(COMPUTED)
        if isinstance(node, ast.Subscript) and (key := _string(node.slice)) in RUN_TIME_CODE:
            found.add(RUN_TIME_CODE[key])
        if isinstance(node, ast.keyword) and node.arg in UNPICKLING:
            if not (isinstance(node.value, ast.Constant) and node.value.value is UNPICKLING[node.arg]):
                found.add("pickle")
        if isinstance(node, ast.keyword) and node.arg == "pickle_module":  # torch.load then unpickles
            found.add("pickle")
    return found


def blank_magic(line: re.Match) -> str:
    """A magic or shell line as `pass` (its text is read on its own), so the rest of its cell parses."""
    return f"{line['indent']}pass"


def unread_code(handed_in: Path) -> list[str]:
    """The files handed in that Python imports but this check cannot read: compiled modules, and zip archives
    (whatever their name, a zip put on sys.path is imported from)."""
    found = []
    for path in sorted(handed_in.rglob("*")):
        if path.is_file() and not path.is_symlink():
            compiled = path.name.endswith(tuple(BYTECODE_SUFFIXES + EXTENSION_SUFFIXES))
            if compiled or zipfile.is_zipfile(path):
                found.append(visible(path.relative_to(handed_in).as_posix()))
    return found


def run_time_reason(cells: list[tuple[str, str, str]], unread: list[str] = ()) -> str | None:
    """Why the cells, and the `unread` files, are to be reviewed for code made at run time, which no text
    comparison reads; None: none."""
    found = [
        (notebook, gid, ", ".join(sorted(names)))
        for notebook, gid, source in cells
        if (names := made_at_run_time(source))
    ] + [(name, "", UNREAD) for name in unread]
    if not found:
        return None
    where = "; ".join(
        f"{f'{notebook} {gid}'.strip()}: {names}" for notebook, gid, names in found[:REASON_PLACES]
    )
    if len(found) > REASON_PLACES:
        where += f"; {len(found) - REASON_PLACES} more"
    return bilingual(
        f"相似度：代码在运行时生成要执行的代码（{where}），它执行的内容不在比较之内，请复核",
        f"similarity: code made at run time ({where}): what it runs is not compared; review it",
    )


def reference_code(course: Course, unit: str) -> tuple[str, str]:
    """(the source notebooks' solution cells as a student would type them, what the release gives of them)."""
    solutions, given = [], []
    for notebook in course.notebooks(unit):
        for gid, cell in notebooks.solution_cells(notebooks.read(course.source / unit / notebook)).items():
            solutions.append(f"# --- {notebook} {gid}\n{notebooks.without_markers(cell.source)}\n")
            given.append("\n".join(notebooks.partition(cell.source)[1]) + "\n")
    return "\n".join(solutions), "\n".join(given)


def reference_modules(course: Course) -> list[Path]:
    """The course's reference implementations (`course/reference/*.py`, beside the wrong implementations)."""
    folder = course.wrong.parent / "reference"
    return sorted(p for p in folder.glob("*.py") if p.name != "__init__.py") if folder.is_dir() else []


def digest(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


@dataclass(frozen=True)
class Match:
    """A student's code that matches another's (or a reference) above the threshold."""

    student: str
    other: str  # a student, or "reference: <file>"
    share: float  # of the student's code or of the other's found in it, the larger

    def names(self) -> tuple[str, str]:
        """Whom it matches, and how much (zh, en)."""
        if self.other.startswith("reference: "):
            source = self.other.removeprefix("reference: ")
            return (
                f"参考答案（{source}）{self.share:.0%}",
                f"the reference solution ({source}) {self.share:.0%}",
            )
        return f"{self.other} {self.share:.0%}", f"{self.other}'s {self.share:.0%}"


SHOWN = 3  # matches named in one student's reason (the report has them all)


def reason(matches: list[Match], report: Path) -> str:
    """One line for one student's matches, the closest first."""
    named = [m.names() for m in sorted(matches, key=lambda m: -m.share)[:SHOWN]]
    more = len(matches) - len(named)
    zh = "、".join(z for z, _ in named) + (f" 等 {len(matches)} 处" if more else "")
    en = ", ".join(e for _, e in named) + (f" and {more} more" if more else "")
    return bilingual(
        f"相似度：代码与 {zh} 相同，请复核（{report}）",
        f"similarity: the code matches {en}: review it ({report})",
    )


def unit_students(folder: Path, unit: str) -> list[str]:
    """The students with a folder of the unit in `folder` (<student>/<unit>/), each name safe as a file name."""
    return [
        p.parent.name for p in sorted(folder.glob(f"*/{unit}")) if intake.SAFE_NAME.fullmatch(p.parent.name)
    ]


def run_time_reasons(course: Course, folder: Path, unit: str) -> dict[str, str]:
    """{student: why} of the unit's students whose solution cells make code at run time, or are too long to read."""
    found = {}
    for student in unit_students(folder, unit):
        cells = student_cells(course, folder, student, unit)
        unread = unread_code(folder / student / unit)
        if why := too_long_reason(joined(cells)) or run_time_reason(cells, unread):
            found[student] = why
    return found


def compare(course: Course, folder: Path, unit: str, threshold: float) -> tuple[list[Match], Path | None]:
    """Compare the unit's students (in `folder`, <student>/<unit>/*.ipynb) with each other and the references;
    write the report; the matches at or above `threshold` and the report (None: no student's code was found)."""
    try:
        from copydetect import CopyDetector
    except ImportError:
        raise ValueError(
            bilingual(
                "相似度检查需要 copydetect：pip install 'copydetect>=0.5,<0.6'（任何有课程文件夹的机器都可以，不需要 GPU）",
                "the similarity check needs copydetect: pip install 'copydetect>=0.5,<0.6' (on any machine with the "
                "course folder; no GPU needed)",
            )
        ) from None

    out = course.root / FOLDER / unit
    shutil.rmtree(out, ignore_errors=True)
    students, references, given = out / "students", out / "reference", out / "given"
    for made in (students, references, given):
        made.mkdir(parents=True)
    for student in unit_students(folder, unit):
        code = student_code(course, folder, student, unit)
        if code and not too_long_reason(code):
            (students / f"{student}.py").write_text(code, encoding="utf-8")
    if not any(students.iterdir()):
        return [], None
    solutions, stubs = reference_code(course, unit)
    (references / "solution_cells.py").write_text(solutions, encoding="utf-8")
    for module in reference_modules(course):
        shutil.copyfile(module, references / module.name)
    (given / "release.py").write_text(stubs, encoding="utf-8")
    report = out / "report.html"
    detector = CopyDetector(
        test_dirs=[str(students)],
        ref_dirs=[str(students), str(references)],
        boilerplate_dirs=[str(given)],
        extensions=["py"],
        display_t=min(threshold, 0.33),
        autoopen=False,
        silent=True,
        out_file=str(report),
    )
    detector.run()
    write_report(detector, report)
    return matches(detector, threshold), report


def quote(code: str, slices, colour: str) -> str:
    """The code as the report shows it, HTML-escaped, the parts `slices` found in the other code highlighted; cut
    to its first QUOTED characters, saying so."""
    from copydetect.utils import highlight_overlap

    shown, _ = highlight_overlap(
        code[:QUOTED],
        slices[:, slices[0] < QUOTED],
        f"<span class='highlight-{colour}'>",
        "</span>",
        escape_html=True,
    )
    if len(code) > QUOTED:
        more = len(code) - QUOTED
        shown += html.escape("\n\n… " + bilingual(f"截去 {more:,} 个字符", f"{more:,} more characters cut"))
    return shown


def quoted_pairs(detector) -> tuple[list[list], int]:
    """The pairs copydetect's report shows (as its `get_copied_code_list`: above its display threshold, the closest
    first), at most PAIRS_QUOTED of each student, each code cut to QUOTED characters; and how many were left out."""
    scores = detector.similarity_matrix
    found = zip(*np.nonzero(scores[:, :, 0] > detector.conf.display_t), strict=True)
    seen, quoted, listed, left_out = set(), Counter(), [], 0
    for i, j in sorted(found, key=lambda ij: -scores[ij[0], ij[1], 0]):
        test, ref = detector.test_files[i], detector.ref_files[j]
        if (ref, test) in seen:
            continue  # the same pair, the other way round
        seen.add((test, ref))
        students = [name for name in (test, ref) if Path(name).parent.name == "students"]
        if any(quoted[name] >= PAIRS_QUOTED for name in students):
            left_out += 1
            continue
        quoted.update(students)
        mine, theirs = detector.slice_matrix.get((test, ref)) or detector.slice_matrix[(ref, test)][::-1]
        shown = [
            quote(detector.file_data[f].raw_code, cut, c)
            for f, cut, c in ((test, mine, "red"), (ref, theirs, "green"))
        ]
        listed.append([*scores[i, j], test, ref, *shown, detector.token_overlap_matrix[i, j]])
    return listed, left_out


def write_report(detector, path: Path) -> None:
    """copydetect's HTML report of the compared codes, bounded: QUOTED characters of each code in a pair (HTML
    escaping makes one at most 5 bytes: 10 × QUOTED bytes a pair), PAIRS_QUOTED pairs a student, with a note at
    its top when anything was cut."""
    listed, left_out = quoted_pairs(detector)
    cut = sum(len(detector.file_data[name].raw_code) > QUOTED for pair in listed for name in pair[2:4])
    detector.get_copied_code_list = lambda: listed  # what its report template shows
    page = detector.generate_html_report(output_mode="return")
    if cut or left_out:
        note = bilingual(
            f"课程说明：报告中每对只引用每份代码的前 {QUOTED:,} 个字符，每名学生只列出最相近的 {PAIRS_QUOTED} 对；"
            f"本报告截短了 {cut} 处引用、略去了 {left_out} 对（相似度矩阵和 grades.csv 中的标记包含全部）。",
            f"Note from the course: each pair quotes the first {QUOTED:,} characters of each code, and each student's "
            f"{PAIRS_QUOTED} closest pairs are listed; in this report {cut} quoted codes were cut and {left_out} pairs "
            "left out (the similarity matrix and the flags in grades.csv hold them all).",
        )
        page = page.replace("<body>", f"<body>\n<p class='alert alert-warning'>{html.escape(note)}</p>", 1)
    replace_text(path, page)


def matches(detector, threshold: float) -> list[Match]:
    """Each student's matches at or above the threshold, from copydetect's similarity matrix."""
    found = []
    for i, test in enumerate(map(Path, detector.test_files)):
        for j, ref in enumerate(map(Path, detector.ref_files)):
            mine, theirs = detector.similarity_matrix[i, j]
            # the larger share: a copy followed by unused code of her own is a small share of hers, all of theirs
            other = ref.stem if ref.parent.name == "students" else f"reference: {ref.name}"
            share = max(mine, theirs)
            if mine >= 0 and share >= threshold:
                found.append(Match(test.stem, other, float(share)))
    return sorted(found, key=lambda m: (m.student, -m.share, m.other))


def flags_path(course: Course) -> Path:
    return course.root / FOLDER / FLAGS_FILE


def read_flags(course: Course) -> dict[str, dict]:
    try:
        return json.loads(flags_path(course).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def saved_flags(course: Course, student: str, unit: str) -> list[str]:
    """The similarity check's reasons to review the pair, while its solution cells are as they were checked."""
    entry = read_flags(course).get(f"{student}/{unit}")
    if not entry or entry["code"] != digest(student_code(course, course.submitted, student, unit)):
        return []
    return entry["reasons"]


def record(
    course: Course, folder: Path, unit: str, found: list[Match], report: Path, run_time: dict[str, str]
) -> dict[str, list[str]]:
    """Keep the unit's flags ("student/unit" -> reasons: its matches, its code made at run time), replacing its
    earlier check; the earlier reasons."""
    flags = read_flags(course)
    earlier = {key: entry["reasons"] for key, entry in flags.items() if key.endswith(f"/{unit}")}
    flags = {key: entry for key, entry in flags.items() if key not in earlier}
    reasons: dict[str, list[str]] = {}
    for student in sorted({match.student for match in found}):
        mine = [match for match in found if match.student == student]
        reasons[student] = [reason(mine, report.relative_to(course.root))]
    for student, why in run_time.items():
        reasons.setdefault(student, []).append(why)
    for student, why in sorted(reasons.items()):
        flags[f"{student}/{unit}"] = {
            "code": digest(student_code(course, folder, student, unit)),
            "reasons": why,
        }
    path = flags_path(course)
    replace_text(path, json.dumps(flags, ensure_ascii=False, indent=1))
    return earlier


def flag_grades(course: Course, unit: str, earlier: dict[str, list[str]]) -> int:
    """Put the unit's similarity flags into grades.csv (`flagged`, `flag_reasons`), replacing the earlier
    check's; scores are never touched. The number of lines flagged by it."""
    path = course.root / "grades.csv"
    if not path.is_file():
        return 0
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        columns, lines = reader.fieldnames or [], list(reader)
    flagged = 0
    for line in lines:
        if line["unit"] != unit:
            continue
        key = f"{line['student_id']}/{unit}"
        old = set(earlier.get(key, []))
        reasons = [r for r in line["flag_reasons"].split(" | ") if r and r not in old]
        new = saved_flags(course, line["student_id"], unit)
        flagged += bool(new)
        line["flag_reasons"] = " | ".join(reasons + new)
        line["flagged"] = "yes" if reasons + new else ""
    replace_csv(path, columns, lines)
    return flagged


def check(course: Course, folder: Path, units: list[str], threshold: float) -> list[Match]:
    """Compare, report and flag each unit; the matches found."""
    found = []
    with grading_lock(course):  # grades.csv is not written by a grading run meanwhile
        for unit in units:
            matched, report = compare(course, folder, unit, threshold)
            if report is None:
                continue
            run_time = run_time_reasons(course, folder, unit)
            flag_grades(course, unit, record(course, folder, unit, matched, report, run_time))
            print(bilingual(f"{unit}：报告 {report}", f"{unit}: report {report}"))
            if run_time:
                print(
                    bilingual(
                        f"  运行时生成代码或代码太长，待复核：{', '.join(run_time)}",
                        f"  code made at run time or too long to read, to review: {', '.join(run_time)}",
                    )
                )
            found += matched
    return found


def main(course: Course, submissions: str | None, units: list[str], threshold: float | None = None) -> int:
    threshold = DEFAULT_THRESHOLD if threshold is None else threshold
    if not 0 < threshold <= 1:
        raise ValueError(
            bilingual(
                f"--threshold 应在 (0, 1] 内，收到 {threshold}",
                f"--threshold must be in (0, 1], got {threshold}",
            )
        )
    folder = Path(submissions) if submissions else course.submitted
    if not folder.is_dir():
        raise ValueError(
            bilingual(
                f"没有提交文件夹 {folder}（<学生>/<单元>/*.ipynb；zip 请先解压或先运行 grade）",
                f"no submissions folder {folder} (<student>/<unit>/*.ipynb; unzip a zip, or run grade first)",
            )
        )
    chosen = course.select(units) if units else sorted({p.name for p in folder.glob("*/*") if p.is_dir()})
    found = check(course, folder, [u for u in chosen if u in course.units()], threshold)
    for match in found:
        print(f"  {match.student}  ~  {match.other}: {match.share:.0%}")
    print(
        bilingual(
            f"{len({(m.student) for m in found})} 名学生待复核（相似度 ≥ {threshold:.0%}），分数未改动",
            f"{len({(m.student) for m in found})} student(s) to review (similarity ≥ {threshold:.0%}); "
            "no score was changed",
        )
    )
    return 0
