"""Docs that match the code (issue 32 item 8): every command the instructor guide's weekly routine and the
README show exists (sub-command and options, through the course's argparse parser; nbgrader's sub-commands),
`--help` prints no CPU-mode banner, and `export` / `regrade` before any grading say so in both languages."""

import re
import shlex
import subprocess
import sys

import pytest
from nbgrader.apps import NbGraderApp

from course import ROOT, cli

GUIDE, README = ROOT / "course" / "instructor_guide.md", ROOT / "README.md"
COURSE_SH_OWN = {"test", "lab", "hub"}  # course.sh's own jobs; every other word goes to `python -m course`
OPERATORS = {"&&", "||", ";", "|"}
BLOCK = re.compile(r"```(?:bash|sh)\n(.*?)```", re.S)


def weekly_routine() -> str:
    """The guide's weekly routine: from its heading to the next heading of the same or a higher level."""
    text = GUIDE.read_text(encoding="utf-8")
    start = re.search(r"^(#+) .*[Ww]eekly routine.*$", text, re.M)
    assert start, "the instructor guide has no weekly routine section"
    level = len(start.group(1))
    end = re.compile(rf"^#{{1,{level}}} ", re.M).search(text, start.end())
    return text[start.start() : end.start() if end else len(text)]


def commands(markdown: str) -> list[list[str]]:
    """The shell commands of the markdown's bash code blocks, split into words (comments dropped)."""
    found = []
    for block in BLOCK.findall(markdown):
        for line in block.replace("\\\n", " ").splitlines():  # a line ending in a backslash goes on
            command: list[str] = []
            for word in [*shlex.split(line, comments=True), "&&"]:  # `a && b`: two commands
                if word not in OPERATORS:
                    command.append(word)
                elif command:
                    found.append(command)
                    command = []
    return found


def problem(words: list[str]) -> str | None:
    """Why a documented command would not run as written (None: it would)."""
    if words[:3] == ["python", "-m", "course"]:
        arguments = words[3:]
    elif words[:2] == ["bash", "course.sh"]:
        if words[2:3] and words[2] in COURSE_SH_OWN:
            return None
        arguments = words[2:]
    elif words[0] == "nbgrader":
        return None if words[1] in NbGraderApp.subcommands else f"nbgrader has no sub-command {words[1]!r}"
    else:
        return None  # another program (pip, export, dpkg, …)
    try:
        cli.build_parser().parse_args(arguments)
    except SystemExit:
        return "the course's parser refuses it"
    return None


def test_the_guide_has_a_bilingual_weekly_routine_whose_every_command_exists(capsys):
    routine = weekly_routine()
    found = commands(routine)
    assert {"grade", "export"} <= {w[3] for w in found if w[:3] == ["python", "-m", "course"]}
    assert {"collect", "release_feedback"} <= {w[1] for w in found if w[0] == "nbgrader"}
    for step in ("收作业", "评分", "人工评分", "反馈", "导出"):
        assert step in routine, step
    for step in ("Collect", "Grade", "Hand-grade", "Feedback", "Export"):
        assert step in routine, step
    wrong = {" ".join(w): why for w in found if (why := problem(w))}
    assert not wrong, f"{wrong}\n{capsys.readouterr().err}"


@pytest.mark.parametrize("path", [GUIDE, README], ids=lambda p: p.name)
def test_every_course_command_in_the_docs_exists(path, capsys):
    found = commands(path.read_text(encoding="utf-8"))
    assert found
    wrong = {" ".join(w): why for w in found if (why := problem(w))}
    assert not wrong, f"{wrong}\n{capsys.readouterr().err}"


def test_jobs_help_says_what_the_code_does():
    helps = cli.build_parser()._subparsers._group_actions[0].choices["grade"].format_help()
    text = " ".join(helps.split())
    assert "three quarters of the cores" in text and "4 GiB" in text and "half the cores" not in text


def test_help_prints_no_cpu_mode_banner():
    for argv in (["--help"], ["grade", "--help"]):
        run = subprocess.run(
            [sys.executable, "-m", "course", *argv], cwd=ROOT, capture_output=True, text=True, timeout=300
        )
        assert run.returncode == 0 and "usage:" in run.stdout
        assert "CPU 模式" not in run.stdout + run.stderr and "CPU mode" not in run.stdout + run.stderr


def test_export_and_regrade_before_any_grading_say_so_in_both_languages(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FLASH_COURSE_DIR", str(tmp_path))  # restored after `--course-dir` set it
    folder = ["--course-dir", str(tmp_path / "semester")]
    (tmp_path / "semester").mkdir()  # a new course folder (`course init`)
    missing = str(tmp_path / "missing.csv")
    for argv in (
        ["export", "--roster", missing],
        ["export", "--roster", missing, "--canvas", str(tmp_path / "canvas.csv")],
        ["regrade", "alice", "06", "--reason", "the seed"],
    ):
        assert cli.main(folder + argv) == 2
        said = capsys.readouterr().out
        assert "course grade" in said and "评分" in said and "grade" in said, said
        assert "Traceback" not in said
    assert not (tmp_path / "canvas.csv").exists()


def test_a_roster_that_does_not_exist_is_refused_before_the_export(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FLASH_COURSE_DIR", str(tmp_path))  # restored after `--course-dir` set it
    (tmp_path / "semester").mkdir()
    (tmp_path / "semester" / "grades.csv").write_text("student_id,unit,score,max_score\n")
    argv = ["--course-dir", str(tmp_path / "semester"), "export", "--roster", str(tmp_path / "missing.csv")]
    assert cli.main(argv) == 2
    said = capsys.readouterr().out
    assert "missing.csv" in said and "文件不存在" in said and "no such file" in said
    assert not (tmp_path / "semester" / "grades_by_cell.csv").exists()


def test_ctrl_c_says_how_to_go_on_in_both_languages_instead_of_a_traceback(monkeypatch, capsys):
    from course.grading import grade

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(grade, "main", interrupted)
    assert cli.main(["grade"]) == 130
    said = capsys.readouterr().out
    assert "再运行同一条命令即可继续" in said and "run the same command again to go on" in said
