"""`python -m course bundle [DEST]`: what a student receives — the release notebooks and `utils`, nothing else.

The bundle is a folder `DEST/flash-attention-student/` and its zip beside it: one folder per unit (the notebooks
of `release/`), the student-facing package `utils/` (course/AUTHORING.md, "Student / instructor split"), a
minimal `pyproject.toml` and `requirements.txt`, `README_STUDENT.md`, the glossary (`GLOSSARY.md`, from `course/glossary.md`), and the course's H100 measurements that
unit 10 cites and its exercises read (`utils.hopper_results.FILES`, at their repository paths). Before the zip is written the bundle
is scanned: no solution or hidden-test region of `source/`, no instructor module (`course`).
"""

from __future__ import annotations

import re
import shutil
import tempfile
import tomllib
from pathlib import Path

from course import ROOT, notebooks
from course.layout import COURSE, Course
from utils import hopper_results
from utils.messages import bilingual

NAME = "flash-attention-student"
MARKER = ".flash-course-bundle"  # a folder holding it is a bundle this command may replace
TEXT_SUFFIXES = {".py", ".ipynb", ".md", ".txt", ".toml", ".json", ".cfg"}
# Instructor tooling, which neither utils nor a notebook imports (tests/test_bundle.py checks the rest is what they
# import): nbgrader (students hand in through the hub or a zip), hypothesis (unit 04's judge draws its cases with
# it), copydetect (`course similarity`).
STUDENT_EXCLUDED = {"nbgrader", "hypothesis", "copydetect"}
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")

README = """\
# FlashAttention 从第一性原理出发 · 学生包 / FlashAttention from First Principles · student bundle

## 安装 · Install

需要 Python ≥ 3.11。在本文件夹中：
/ Python ≥ 3.11 is required. In this folder:

```bash
python -m venv .venv && source .venv/bin/activate
pip install -e .          # 安装 utils 及依赖 / installs utils and its dependencies
jupyter lab               # 打开各单元文件夹中的笔记本 / open the notebooks in the unit folders
```

没有 GPU 时，`import utils` 让 Triton 在 CPU 上以解释器模式运行（较慢，但结果一致）。
/ Without a GPU, `import utils` runs Triton in interpreter mode on the CPU (slower, same results).

## 内容 · Contents

{units}

`GLOSSARY.md` 是课程的中英术语表：笔记本里的每个术语都在那里有定义。
/ `GLOSSARY.md` is the course's bilingual glossary: every term the notebooks use is defined there.

`benchmarks/results/h100/hopper/` 是课程在 H100 上的测量结果：单元 10 引用它们，它的练习要读它们；它的速度检查（只在
GPU 上评分）按 GPU 类别的阈值表在 `utils/speed_bars.py`，其中 H100 一行由它们校准。
/ `benchmarks/results/h100/hopper/` holds the course's measurements on an H100: unit 10 cites them and its exercises
read them; its speed check's bars by GPU class (graded on a GPU only) are in `utils/speed_bars.py`, the H100's
calibrated on them.

`utils/` 是笔记本用到的工具（测量、画图、自检用的 float64 参考）；`utils/checks/` 是可见自检，`utils/judged/`
是评审程序在子进程里运行的部分。评分代码调用这些参考会被评审程序发现，不得分。
/ `utils/` holds the notebooks' tools (measuring, plotting, the float64 references of the self-checks);
`utils/checks/` holds the visible self-checks and `utils/judged/` what the judge runs in its child process. Graded
code that calls those references is detected by the judge and earns no points.

## 作答与提交 · Working and handing in

在 `# YOUR CODE HERE / 在此作答` 处作答，运行自检单元格，然后按老师的说明提交（JupyterHub 的
Assignments 页面，或上传 `<单元>/*.ipynb` 的 zip）。隐藏测试由评审程序在你的代码之外运行。
/ Answer where it says `# YOUR CODE HERE / 在此作答`, run the self-check cells, then hand in as your instructor
says (the Assignments tab on JupyterHub, or a zip of `<unit>/*.ipynb`). Hidden tests are run by the judge,
outside your code.

演示在没有课程参考实现时使用 PyTorch 的 SDPA 或朴素注意力，并会打印说明。
/ Demos fall back to PyTorch's SDPA or naive attention where the course's reference kernels are absent, and
say so.
"""


def student_dependencies(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The course's runtime requirements without the instructor's tooling."""
    deps = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    return [d for d in deps if re.split(r"[<>=!~ \[]", d, maxsplit=1)[0] not in STUDENT_EXCLUDED]


def pyproject_text(dependencies: list[str], version: str) -> str:
    deps = "".join(f'    "{d}",\n' for d in dependencies)
    return (
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "flash-attention-student"\nversion = "{version}"\n'
        'description = "FlashAttention from First Principles: student notebooks and utils"\n'
        f'requires-python = ">=3.11"\ndependencies = [\n{deps}]\n\n'
        '[tool.setuptools.packages.find]\ninclude = ["utils*"]\n'
    )


def course_version_number(pyproject: Path = ROOT / "pyproject.toml") -> str:
    return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]


def normalised(text: str) -> str:
    """Lines stripped, blank lines dropped: layout changes cannot hide a copied region."""
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def regions_of(source: str) -> list[str]:
    """Each solution or hidden-test region of a cell, normalised, one string per BEGIN … END span."""
    return [region for lines in notebooks.regions(source) if (region := normalised("\n".join(lines)))]


def secret_regions(source: Path) -> dict[str, str]:
    """{"<unit>/<notebook>#<n>": normalised text} of every solution and hidden-test region in `source`."""
    regions = {}
    for path in sorted(source.glob("*/*.ipynb")):
        found = [region for cell in notebooks.read(path).cells for region in regions_of(cell.source)]
        regions.update({f"{path.parent.name}/{path.name}#{i}": region for i, region in enumerate(found)})
    return regions


def bundled_text(path: Path) -> str:
    if path.suffix == ".ipynb":
        return "\n".join(cell.source for cell in notebooks.read(path).cells)
    return path.read_text(encoding="utf-8", errors="replace")


def find_leaks(folder: Path, source: Path, instructor: Path = ROOT / "course") -> list[str]:
    """Every solution region of `source` found in a text file of `folder`, and every instructor module."""
    leaks = []
    regions = secret_regions(source)
    instructor_files = {p.read_bytes() for p in instructor.rglob("*.py")} if instructor.is_dir() else set()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = path.relative_to(folder)
        if "course" in name.parts[:-1] or name.stem == "course" and path.suffix == ".py":
            leaks.append(bilingual(f"{name}：教师模块", f"{name}: instructor module"))
        if path.suffix == ".py" and path.read_bytes() in instructor_files and path.stat().st_size > 0:
            leaks.append(
                bilingual(f"{name}：与教师模块内容相同", f"{name}: same content as an instructor module")
            )
        if path.suffix not in TEXT_SUFFIXES:
            continue
        text = normalised(bundled_text(path))
        leaks += [
            bilingual(f"{name}：含有 {region} 的答案", f"{name}: contains the answer of {region}")
            for region, secret in regions.items()
            if secret in text
        ]
    return leaks


def unit_list(units: list[str]) -> str:
    return "\n".join(f"- `{unit}/`" for unit in units)


def write_bundle(course: Course, folder: Path) -> list[str]:
    """Write the bundle's files into the empty `folder`; the units it holds."""
    units = [u for u in course.units() if (course.release / u).is_dir()]
    for unit in units:
        shutil.copytree(course.release / unit, folder / unit, ignore=SKIPPED)
    shutil.copytree(ROOT / "utils", folder / "utils", ignore=SKIPPED)
    shutil.copyfile(ROOT / "course" / "glossary.md", folder / "GLOSSARY.md")
    for name in hopper_results.FILES:
        copy = folder / hopper_results.RESULTS / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / hopper_results.RESULTS / name, copy)
    dependencies = student_dependencies()
    (folder / "pyproject.toml").write_text(
        pyproject_text(dependencies, course_version_number()), encoding="utf-8"
    )
    (folder / "requirements.txt").write_text("".join(f"{d}\n" for d in dependencies), encoding="utf-8")
    (folder / "README_STUDENT.md").write_text(README.format(units=unit_list(units)), encoding="utf-8")
    (folder / MARKER).write_text("", encoding="utf-8")
    return units


def build(dest: Path, course: Course = COURSE) -> tuple[Path, Path]:
    """Write `dest/flash-attention-student/` and `dest/flash-attention-student.zip`; raise ValueError on a leak
    or where `dest` holds a folder of that name that is not an earlier bundle (it is never overwritten)."""
    dest.mkdir(parents=True, exist_ok=True)
    folder, archive = dest / NAME, dest / f"{NAME}.zip"
    if folder.exists() and not (folder / MARKER).exists():
        raise ValueError(
            bilingual(
                f"{folder} 已存在且不是学生包：不会覆盖",
                f"{folder} exists and is not a bundle: not overwritten",
            )
        )
    with tempfile.TemporaryDirectory(prefix=".bundle-", dir=dest) as tmp:
        staged = Path(tmp) / NAME
        staged.mkdir()
        units = write_bundle(course, staged)
        leaks = find_leaks(staged, course.source)
        if leaks:
            raise ValueError("\n".join(leaks))
        zipped = shutil.make_archive(str(Path(tmp) / NAME), "zip", root_dir=tmp, base_dir=NAME)
        if folder.exists():
            shutil.rmtree(folder)
        staged.rename(folder)
        Path(zipped).replace(archive)
    if not units:
        print(bilingual("release/ 中没有单元", "no units in release/"))
    return folder, archive


def main(dest: str | None, course: Course = COURSE) -> int:
    folder, archive = build(Path(dest or course.checkout / "bundle"), course)
    print(
        bilingual(
            f"学生包（无答案、无教师模块）：{folder}",
            f"student bundle (no answers, no instructor modules): {folder}",
        )
    )
    print(bilingual(f"压缩包：{archive}", f"zip: {archive}"))
    return 0
