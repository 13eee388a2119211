"""Argument parsing for `python -m course`; each sub-command lives in its own module."""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path

from course import bench, doctor


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m course",
        description="FlashAttention 课程工具 / FlashAttention course tooling",
    )
    parser.add_argument(
        "--course-dir",
        metavar="DIR",
        help="课程文件夹：本学期的提交、成绩簿、盐、名单与备份（默认 $FLASH_COURSE_DIR，否则 "
        "~/flash-attention-semester）/ the course folder: the semester's submissions, gradebook, salt, roster and "
        "backups (default: $FLASH_COURSE_DIR, else ~/flash-attention-semester)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser(
        "check", help="检查环境、semester.toml 与名单 / check the environment, semester.toml and the roster"
    )
    check.add_argument(
        "--roster",
        help="名单 CSV（默认课程文件夹中的 roster.csv）/ roster CSV (default: roster.csv in the course folder)",
    )
    check.set_defaults(
        run=lambda args: doctor.main(_course(check=False), Path(args.roster) if args.roster else None)
    )
    init = sub.add_parser(
        "init",
        help="新建课程文件夹（--course-dir 或 $FLASH_COURSE_DIR 指定的文件夹必须已存在）/ make the course folder (one "
        "named by --course-dir or $FLASH_COURSE_DIR must exist before any other command uses it)",
    )
    init.set_defaults(run=run_init)

    release = sub.add_parser(
        "release", help="由 source/ 生成 release/ 并检查泄露 / generate release/ from source/"
    )
    release.add_argument("units", nargs="*", metavar="UNIT", help="单元（默认全部）/ units (default: all)")
    release.add_argument(
        "--check",
        action="store_true",
        help="只检查 release/ 是否最新 / only check that release/ is up to date",
    )
    add_db_option(release)  # given, the released units are registered in the course gradebook there
    release.set_defaults(run=run_release)

    grade = sub.add_parser("grade", help="自动评分 / autograde submissions")
    grade.add_argument(
        "submissions",
        nargs="?",
        help="<学生>/<单元>/*.ipynb 文件夹或 zip（默认课程文件夹中的 submitted/，原地评分）/ folder or zip of "
        "<student>/<unit>/*.ipynb (default: the course folder's submitted/, graded in place)",
    )
    grade.add_argument(
        "--timeout", type=float, help="每个学生每个单元的时限（秒）/ wall-clock seconds per student and unit"
    )
    add_jobs_option(grade)
    add_ray_option(grade)
    grade.add_argument(
        "--no-sandbox",
        action="store_true",
        help="不在沙箱中运行学生代码（成绩表会注明）/ run students' code without the sandbox (the grades CSV says so)",
    )
    add_weaker_sandbox_option(grade)
    grade.add_argument(
        "--all",
        action="store_true",
        dest="everything",
        help="全部重评，包括未改动的提交（人工评分保留）/ grade every submission again, unchanged ones too "
        "(hand grades are kept); by default only new or changed submissions are graded",
    )
    grade.add_argument(
        "--resume", action="store_true", help="默认行为，保留给旧脚本 / the default (kept for old scripts)"
    )
    grade.add_argument(
        "--student",
        action="append",
        default=[],
        help="只评这些学生（可重复）/ grade only this student (repeatable)",
    )
    grade.add_argument(
        "--unit",
        action="append",
        default=[],
        help="只评这些单元（可重复）/ grade only this unit (repeatable)",
    )
    grade.add_argument(
        "--timestamps",
        help="zip 上传的提交时间 CSV（student_id,unit,timestamp）/ submission times of zip uploads (CSV)",
    )
    grade.add_argument(
        "--feedback-only",
        action="store_true",
        help="截止前的反馈：另一组种子，不写成绩簿，只写 feedback_preview/ / "
        "feedback before the deadline: other seeds, never writes the gradebook, writes feedback_preview/ only",
    )
    grade.add_argument(
        "--verbose",
        action="store_true",
        help="最后列出每份提交，而不只是需要查看的 / list every pair at the end, not only those that need a look",
    )
    add_db_option(grade)
    grade.set_defaults(run=run_grade)

    export = sub.add_parser(
        "export", help="按单元格的成绩与 LMS 导入文件 / grades by cell and LMS import files"
    )
    export.add_argument(
        "--roster",
        help="名单 CSV（默认课程文件夹中的 roster.csv）/ roster CSV (student_id,name,email,sis_login_id,canvas_id,"
        "section,idnumber; default: roster.csv in the course folder)",
    )
    export.add_argument("--canvas", help="写出 Canvas 成绩导入 CSV / write Canvas's gradebook import CSV")
    export.add_argument("--moodle", help="写出 Moodle 成绩导入 CSV / write Moodle's grade import CSV")
    export.add_argument("--moodle-key", choices=["idnumber", "email"], default="idnumber")
    export.add_argument(
        "--columns",
        help="单元到 LMS 列名的 CSV（unit,column）/ CSV mapping each unit to its LMS column (unit,column)",
    )
    export.add_argument(
        "--lms-gradebook",
        help="LMS 自己导出的成绩册 CSV：每个单元必须落在其中已有的列 / the LMS's own exported gradebook CSV: "
        "every unit must land in one of its columns (never a new, duplicate assignment)",
    )
    export.add_argument(
        "--missing-as-zero",
        action="store_true",
        help="未提交的单元导出为 0（默认留空，LMS 保留原值）/ export a unit not submitted as 0 (default: blank)",
    )
    export.add_argument(
        "--feedback-for",
        choices=["canvas", "moodle"],
        help="改为写出一个单元（--unit）的反馈，按 LMS 收回的格式（Moodle 还需 --worksheet）/ instead, write one "
        "unit's (--unit) feedback as the LMS takes it back (Moodle: also --worksheet)",
    )
    export.add_argument("--unit", help="--feedback-for 的单元 / the unit of --feedback-for")
    export.add_argument(
        "--worksheet",
        help="Moodle 作业的评分表 CSV（“下载评分工作表”）：写回成绩与反馈评语 / the Moodle assignment's grading "
        "worksheet CSV: written back with grades and feedback comments",
    )
    export.add_argument(
        "--into",
        help="--feedback-for 的输出文件夹（默认课程文件夹的 lms_feedback/）/ where --feedback-for writes "
        "(default: lms_feedback/ in the course folder)",
    )
    add_db_option(export)
    export.set_defaults(run=run_export)

    lms_import = sub.add_parser(
        "import",
        help="把 Canvas / Moodle 的批量下载放成 <学生>/<单元>/ / place a Canvas or Moodle bulk download as "
        "<student>/<unit>/",
    )
    lms_import.add_argument("download", help="LMS 下载的 zip / the LMS's zip")
    lms_import.add_argument("--unit", required=True, help="这次作业的单元 / the assignment's unit")
    lms_import.add_argument(
        "--into", required=True, help="班级文件夹（交给 course grade）/ class folder (for course grade)"
    )
    lms_import.add_argument("--lms", choices=["auto", "canvas", "moodle"], default="auto")
    lms_import.add_argument(
        "--roster",
        help="名单 CSV（默认课程文件夹中的 roster.csv）/ roster CSV (default: the course folder's)",
    )
    lms_import.add_argument(
        "--times",
        help="LMS 记录的提交时间：Canvas REST API 的 submissions JSON，或 Moodle 的评分表 CSV（也按其中的邮箱或 ID 号认人）；"
        "写入 FOLDER/timestamps.csv / the LMS's record of submission times: Canvas's submissions JSON (REST API) or "
        "Moodle's grading worksheet CSV (whose email address or ID number also says who is who); written to "
        "FOLDER/timestamps.csv",
    )
    lms_import.set_defaults(run=run_import)

    add_lms_parser(sub)

    regrade = sub.add_parser(
        "regrade", help="重评一名学生的一个单元并记录申请 / regrade one student's unit and log the request"
    )
    regrade.add_argument("student")
    regrade.add_argument("unit")
    regrade.add_argument("--reason", required=True, help="申请理由 / the student's reason")
    regrade.add_argument(
        "--outcome", default="", help="结论（默认按分数变化）/ outcome (default: from the scores)"
    )
    regrade.add_argument("--timeout", type=float)
    add_weaker_sandbox_option(regrade)
    add_ray_option(regrade)
    add_db_option(regrade)
    regrade.set_defaults(run=run_regrade)

    selftest = sub.add_parser("selftest", help="验证评分能区分对错 / prove the graders discriminate")
    selftest.add_argument("units", nargs="*", metavar="UNIT", help="单元（默认全部）/ units (default: all)")
    selftest.add_argument("--jobs", type=int, default=2, help="并行数 / parallel nbgrader runs (default 2)")
    selftest.add_argument(
        "--timeout", type=float, help="每个假学生的时限（秒）/ wall-clock seconds per fake student"
    )
    selftest.add_argument(
        "--red-team",
        action="store_true",
        help="也运行 course/redteam 中的攻击 / also run the attacks in course/redteam",
    )
    selftest.add_argument(
        "--sample",
        action="store_true",
        help="快速子集：每个测试单元格一个错误实现、每道练习一个合法变体、每类攻击一个（CI 用）/ "
        "quick subset: one wrong implementation per test cell, one legitimate variant per exercise, one attack "
        "of each kind (CI)",
    )
    selftest.add_argument(
        "--attacks-only",
        action="store_true",
        help="只运行参考答案、空白版和 course/redteam 中的攻击 / only the solution, the stubs and the attacks",
    )
    selftest.set_defaults(
        run=lambda args: _selftest().main(
            args.units,
            args.jobs,
            args.timeout,
            red_team=args.red_team,
            sample=args.sample,
            attacks_only=args.attacks_only,
            ray=args.ray,
        )
    )
    add_ray_option(selftest)

    mistakes = sub.add_parser(
        "wrong",
        help="错误实现目录：与参考答案的差异、说明和必须失分的测试 / the wrong implementations as a catalogue: "
        "each one's diff to the reference, its explanation and the tests that must catch it",
    )
    mistakes.add_argument("unit", nargs="?", metavar="UNIT", help="单元（默认全部）/ unit (default: all)")
    mistakes.add_argument("name", nargs="?", metavar="NAME", help="名字中的一段 / part of a name")
    mistakes.set_defaults(run=lambda args: _catalogue().main(args.unit, args.name))

    bundle = sub.add_parser(
        "bundle",
        help="写出学生包（文件夹和 zip，无答案）/ write the student bundle (folder and zip, no answers)",
    )
    bundle.add_argument(
        "dest", nargs="?", help="目标文件夹（默认 bundle/）/ destination folder (default: bundle/)"
    )
    bundle.set_defaults(run=lambda args: _bundle().main(args.dest))

    demo = sub.add_parser("demo", help="发布并为示例班级评分 / release and grade the sample class")
    demo.add_argument(
        "--timeout", type=float, help="每个学生每个单元的时限（秒）/ wall-clock seconds per student and unit"
    )
    add_jobs_option(demo)
    demo.set_defaults(run=lambda args: _demo().main(args.timeout, args.jobs))

    similar = sub.add_parser(
        "similarity",
        help="学生代码之间及与参考答案的相似度：HTML 报告，并在成绩表中标记待复核（不改分数）/ "
        "similarity between students' code and with the reference solutions: an HTML report and a review flag "
        "in grades.csv (scores never change)",
    )
    similar.add_argument(
        "submissions",
        nargs="?",
        help="<学生>/<单元>/*.ipynb 文件夹（默认 submitted/）/ folder of <student>/<unit>/*.ipynb "
        "(default: submitted/, as graded)",
    )
    similar.add_argument(
        "--unit", action="append", default=[], help="只查这些单元（可重复）/ only this unit (repeatable)"
    )
    similar.add_argument(
        "--threshold",
        type=float,
        help="标记的相似度（0–1，默认 0.8）/ similarity that flags a student (0–1, default 0.8)",
    )
    similar.set_defaults(
        run=lambda args: _similarity().main(_course(), args.submissions, args.unit, args.threshold)
    )

    stats = sub.add_parser(
        "stats",
        help="每个单元各性质的全班失败率：表格与图 / how often each judged property failed across the class, "
        "per unit: a table and a plot",
    )
    stats.add_argument("unit", nargs="?", metavar="UNIT", help="单元（默认全部）/ unit (default: all)")
    add_db_option(stats)  # the hand grades are in the course gradebook
    stats.set_defaults(run=lambda args: _stats().main(_course(args.db), args.unit))

    add_handgrade_parser(sub)
    formgrader = sub.add_parser(
        "formgrader",
        help="在课程文件夹上启动带 formgrader 的 JupyterLab / JupyterLab with nbgrader's formgrader on the course "
        "folder (options after -- go to jupyter lab)",
    )
    formgrader.add_argument(
        "options", nargs=argparse.REMAINDER, help="jupyter lab 的选项 / jupyter lab's options"
    )
    add_db_option(formgrader)
    formgrader.set_defaults(
        run=lambda args: _formgrader().main(_course(args.db), [o for o in args.options if o != "--"])
    )
    feedback = sub.add_parser(
        "feedback",
        help="重新生成输入改变了的学生的反馈（人工评分、导入、semester.toml）/ make again the feedback of exactly "
        "the students whose feedback inputs changed (a hand grade, an import, semester.toml)",
    )
    feedback.add_argument("units", nargs="*", metavar="UNIT", help="单元（默认全部）/ units (default: all)")
    feedback.add_argument("--force", action="store_true", help="全部重新生成 / make every feedback again")
    feedback.add_argument(
        "--jobs", type=int, help="同时运行的生成任务数（默认每核一个）/ jobs at once (default: one a core)"
    )
    add_db_option(feedback)
    feedback.set_defaults(
        run=lambda args: _feedback().main(_course(args.db), args.units, args.force, args.jobs)
    )

    service = sub.add_parser(
        "feedback-service",
        help="提交后几分钟内给出隐藏测试的预览反馈（截止前）/ hidden-test feedback minutes after a student "
        "hands in, before the deadline",
    )
    service.add_argument(
        "--exchange",
        metavar="DIR",
        help="nbgrader 的交换文件夹（Exchange.root）：监视 inbound/，反馈写入 feedback/ / nbgrader's exchange "
        "(Exchange.root): watches inbound/, writes feedback/",
    )
    service.add_argument(
        "--course-id",
        default="flash-attention-first-principles",
        help="交换中的课程 id / the course id in the exchange",
    )
    service.add_argument(
        "--submissions",
        metavar="DIR",
        help="不用交换时：<学生>/<单元>/*.ipynb 文件夹，反馈写入 feedback_preview/ / without an exchange: a "
        "folder of <student>/<unit>/*.ipynb, feedback into feedback_preview/",
    )
    add_jobs_option(service)
    add_ray_option(service)
    service.add_argument(
        "--timeout", type=float, help="每个学生每个单元的时限（秒）/ wall-clock seconds per student and unit"
    )
    service.add_argument(
        "--allow-late",
        action="store_true",
        help="截止时间（含延期）之后也给反馈 / give feedback after the due date (and extension) too",
    )
    service.add_argument(
        "--once",
        action="store_true",
        help="评完等待中的提交后退出（cron 用）/ grade what waits, then exit (for cron)",
    )
    service.add_argument(
        "--poll",
        type=float,
        default=2.0,
        help="查看新提交的间隔（秒）/ seconds between looks for submissions",
    )
    service.set_defaults(run=run_feedback_service)

    migrate = sub.add_parser(
        "migrate-state",
        help="把检出目录中旧布局的学期文件移到课程文件夹（不覆盖任何文件）/ move a semester's files of the earlier "
        "layout from the checkout into the course folder (overwrites nothing)",
    )
    migrate.set_defaults(run=run_migrate_state)

    bench.add_parser(sub)  # its heavy imports (torch, triton) happen in bench.main
    return parser


def add_lms_parser(sub) -> None:
    """`lms pull`: the LMS's records fetched through its API (course.grading.lms_pull)."""
    lms = sub.add_parser("lms", help="从 LMS 的 API 取记录 / fetch records through the LMS's API")
    steps = lms.add_subparsers(dest="step", required=True)
    pull = steps.add_parser(
        "pull",
        help="用令牌取 Canvas 一个作业的 submissions JSON（提交时间），存入课程文件夹 / fetch one Canvas "
        "assignment's submissions JSON (submission times) into the course folder, with a token",
    )
    pull.add_argument(
        "--url", required=True, help="Canvas 的地址 / Canvas's address, e.g. https://canvas.uni.edu"
    )
    pull.add_argument(
        "--course", required=True, dest="course_id", help="Canvas 的课程 id / Canvas's course id"
    )
    pull.add_argument("--assignment", required=True, help="Canvas 的作业 id / Canvas's assignment id")
    pull.add_argument("--unit", required=True, help="这次作业的单元 / the assignment's unit")
    pull.add_argument(
        "--token-file",
        help="只有你能读的令牌文件（chmod 600；默认 $FLASH_CANVAS_TOKEN）/ a token file only you can read "
        "(chmod 600; default: $FLASH_CANVAS_TOKEN)",
    )
    pull.set_defaults(
        run=lambda args: _lms_pull().main(
            _course(), args.url, args.course_id, args.assignment, args.unit, args.token_file
        )
    )


def add_handgrade_parser(sub) -> None:
    """`handgrade export|import|rescore`: written answers graded by rubric in spreadsheets (course.grading.handgrade)."""
    handgrade = sub.add_parser(
        "handgrade", help="按评分细则、分给评分人的人工评分表 / hand grading by rubric, in sheets for a team"
    )
    steps = handgrade.add_subparsers(dest="step", required=True)
    export = steps.add_parser("export", help="每个评分人一张 CSV 评分表 / one CSV sheet per grader")
    export.add_argument("unit")
    export.add_argument("--graders", nargs="+", required=True, metavar="NAME")
    export.add_argument("--by", choices=["question", "student"], default="question")
    export.add_argument(
        "--anonymous", action="store_true", help="不写学生名，只写不透明 id / an opaque id instead of names"
    )
    export.add_argument(
        "--into", help="写到这个文件夹（默认课程文件夹的 handgrade/<单元>/）/ folder of the sheets"
    )
    add_db_option(export)
    export.set_defaults(
        run=lambda args: _handgrade().main_export(
            _course(args.db), args.unit, args.graders, args.by, args.anonymous, args.into
        )
    )
    load = steps.add_parser("import", help="把评分表写入成绩簿 / apply sheets to the gradebook")
    load.add_argument("sheets", nargs="+", metavar="SHEET")
    load.add_argument("--unit", help="只接受这个单元的评分表 / accept sheets of this unit only")
    load.add_argument(
        "--resolve",
        action="store_true",
        help="这些评分表的分数在冲突时胜出（被替换的保留在记录中）/ these sheets' marks win where they disagree "
        "(what they replace is kept in the ledger)",
    )
    add_db_option(load)
    load.set_defaults(
        run=lambda args: _handgrade().main_import(_course(args.db), args.sheets, args.unit, args.resolve)
    )
    rescore = steps.add_parser(
        "rescore", help="按现在的评分细则重新计分 / score every answer again by the rubric as it is now"
    )
    rescore.add_argument("unit")
    add_db_option(rescore)
    rescore.set_defaults(run=lambda args: _handgrade().main_rescore(_course(args.db), args.unit))


def run_release(args) -> int:
    """Generate release/; with `--db` (or FLASH_COURSE_DB), also register the released units in the course
    gradebook in that database (checked first), as nbgrader's generate_assignment would, so formgrader lists them."""
    if args.check:
        return _release().main(args.units, check=True)
    from course.grading import gradebook_db, semester

    course = _course(args.db)
    if course.db:  # a wrong URL or password, another database: refused before anything is made
        gradebook_db.settle(course)
    status = _release().main(args.units, course=course)
    if status == 0:
        units = course.select(args.units)
        if course.db and units:
            from course.grading import lms

            _grade().register_units(course, units, lms.nbgrader_students(semester.course_roster(course)))
        if lock := semester.pin_release(course, units):
            print(f"semester: {lock}")
    return status


def run_grade(args) -> int:
    grade, course = _grade(), _course(args.db)
    selection = grade.Selection(
        tuple(args.student),
        tuple(course.select(args.unit)) if args.unit else (),
        Path(args.timestamps) if args.timestamps else None,
    )
    from course.judge import sandbox as judge_sandbox

    sandbox = judge_sandbox.requested(args.no_sandbox, args.allow_weaker_sandbox)
    return grade.main(
        args.submissions or course.submitted,
        args.timeout,
        args.jobs,
        course,
        sandbox,
        args.everything,
        selection,
        args.feedback_only,
        args.verbose,
        args.ray,
    )


def run_export(args) -> int:
    from course.grading import semester
    from utils.messages import bilingual

    lms, course = _lms(), _course(args.db)
    if not (course.root / "grades.csv").is_file():
        raise ValueError(
            bilingual(
                f"课程文件夹 {course.root} 中还没有成绩：先用 `python -m course grade` 评分",
                f"no grades in the course folder {course.root} yet: grade first with `python -m course grade`",
            )
        )
    roster, canvas, moodle = (Path(a) if a else None for a in (args.roster, args.canvas, args.moodle))
    if roster is None and (course.root / "roster.csv").is_file():
        roster = course.root / "roster.csv"
    refuse_mixed_export(args)
    if args.feedback_for:
        return run_lms_feedback(args, course, roster or course.root / "roster.csv")
    if roster:
        semester.read_roster(roster)  # checked before anything is written
    mapping, lms_gradebook = (Path(a) if a else None for a in (args.columns, args.lms_gradebook))
    return lms.export(
        course, roster, canvas, moodle, args.moodle_key, mapping, lms_gradebook, args.missing_as_zero
    )


def refuse_mixed_export(args) -> None:
    """`export` writes grades or (`--feedback-for`) feedback: an option of the other is refused, never ignored."""
    from utils.messages import bilingual

    grades = ("--canvas", "--moodle", "--columns", "--lms-gradebook", "--missing-as-zero")
    feedback = ("--unit", "--worksheet", "--into")
    given = [name for name in grades + feedback if getattr(args, name[2:].replace("-", "_"))]
    if args.feedback_for and (wrong := [name for name in given if name in grades]):
        raise ValueError(
            bilingual(
                f"--feedback-for 只写反馈；{wrong} 属于成绩导出：分两次运行 export",
                f"--feedback-for writes feedback only; {wrong} belong to the grades export: run export twice",
            )
        )
    if not args.feedback_for and (wrong := [name for name in given if name in feedback]):
        raise ValueError(
            bilingual(f"{wrong} 只与 --feedback-for 一起使用", f"{wrong} go with --feedback-for only")
        )


def run_lms_feedback(args, course, roster: Path) -> int:
    from course.grading import lms_feedback
    from utils.messages import bilingual

    if not args.unit:
        raise ValueError(bilingual("--feedback-for 需要 --unit", "--feedback-for needs --unit"))
    into = Path(args.into) if args.into else course.root / "lms_feedback"
    worksheet = Path(args.worksheet) if args.worksheet else None
    return lms_feedback.main(course, args.feedback_for, args.unit, into, roster, worksheet)


def run_import(args) -> int:
    from course.grading import lms_import

    return lms_import.main(_course(), args.download, args.unit, args.into, args.roster, args.lms, args.times)


def run_regrade(args) -> int:
    from course.grading import gradebook_db, lms, semester
    from utils.messages import bilingual

    grade, course = _grade(), _course(args.db)
    gradebook_db.settle(course)  # a wrong URL or password, another database: refused before reading it
    (unit,) = course.select([args.unit])
    if not (course.submitted / args.student / unit).is_dir():
        raise ValueError(
            bilingual(
                f"{args.student} 的 {unit} 还没有评过分（课程文件夹 {course.root} 中没有这份提交）："
                "先用 `python -m course grade` 评分",
                f"{args.student}'s {unit} was never graded (the course folder {course.root} has no such "
                "submission): grade it first with `python -m course grade`",
            )
        )

    def judged() -> str:  # what the judge gave, without hand scores: the log tells its change from theirs
        points = lms.judge_points(course, args.student, unit)
        return "" if points is None else f"{points:g}"

    before, judged_before = semester.final_score(course, args.student, unit), judged()
    selection = grade.Selection((args.student,), (unit,))
    from course.judge import sandbox as judge_sandbox

    sandbox = judge_sandbox.requested(allow_weaker=args.allow_weaker_sandbox)
    options = dict(sandbox=sandbox, everything=True, selection=selection, ray=args.ray)
    grade.grade(course, course.submitted, args.timeout, **options)
    after, judged_after = semester.final_score(course, args.student, unit), judged()
    entry = semester.record_regrade(
        course, args.student, unit, args.reason, before, after, args.outcome, (judged_before, judged_after)
    )
    print(bilingual(f"重评：{entry['outcome']}", f"regrade: {entry['outcome']}"))
    return 0


def run_init(args) -> int:
    from course import layout
    from utils.messages import bilingual

    course = _course(check=False, exists=False)
    made = layout.init_folder(course)
    print(
        bilingual(
            f"{'已新建' if made else '已存在（未改动）'}课程文件夹：{course.root}。接下来写名单 roster.csv 和截止时间 "
            "semester.toml（教师指南 8.1）",
            f"{'made' if made else 'exists already (unchanged)'}: the course folder {course.root}. Next, write the "
            "roster roster.csv and the due dates semester.toml (instructor guide 8.1)",
        )
    )
    return 0


def run_feedback_service(args) -> int:
    import signal

    from course.grading import feedback_service, grade, resources
    from course.judge import sandbox
    from utils.messages import bilingual

    if not (args.exchange or args.submissions):
        raise ValueError(
            bilingual(
                "给出 --exchange（nbgrader 的交换）或 --submissions（提交文件夹）",
                "give --exchange (nbgrader's exchange) or --submissions (a submissions folder)",
            )
        )
    if args.jobs is not None and args.jobs < 1:
        raise ValueError(
            bilingual(f"--jobs 至少为 1，收到 {args.jobs}", f"--jobs must be at least 1, got {args.jobs}")
        )
    if args.ray and not args.jobs:
        raise ValueError(
            bilingual(
                "--ray 需要 --jobs：每轮评多少份（集群同时能评的份数）",
                "--ray needs --jobs: how many a round grades (what the cluster grades at once)",
            )
        )
    sandbox.choose("auto")  # the same sandbox as `course grade`: a bilingual refusal before anything is taken
    exchange = feedback_service.Exchange(Path(args.exchange), args.course_id) if args.exchange else None
    waiting = 1 << 20  # as many as wait: the machine's own bound decides
    jobs = args.jobs or resources.default_jobs(
        waiting, resources.cpu_count(), resources.gpu_memory_gib(), resources.gradings_memory_gib()
    )
    settings = feedback_service.Settings(
        exchange,
        Path(args.submissions) if args.submissions else None,
        jobs,
        args.timeout,
        ray=args.ray,
        allow_late=args.allow_late,
    )

    def stop(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)  # stopped like Ctrl-C: what was running is graded at the next start
    grade.no_world_writable()
    service = feedback_service.Service(_course(), settings)
    feedback_service.say(f"反馈服务已启动：每轮 {jobs} 份", f"feedback service started: {jobs} a round")
    return feedback_service.run(service, args.once, args.poll)


def run_migrate_state(args) -> int:
    from course import layout
    from utils.messages import bilingual

    course = _course(check=False, exists=False)  # the folder the files move into may be new
    moved = layout.migrate_state(course)
    print(
        bilingual(
            f"已移到 {course.root}：{', '.join(moved)}", f"moved into {course.root}: {', '.join(moved)}"
        )
        if moved
        else bilingual(
            f"检出目录中没有学期文件；课程文件夹：{course.root}",
            f"nothing to move; course folder: {course.root}",
        )
    )
    return 0


def add_db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        default=os.environ.get("FLASH_COURSE_DB") or None,
        metavar="URL",
        help="课程成绩簿所在的数据库，例如 postgresql://用户@主机/数据库（默认 $FLASH_COURSE_DB，否则课程中的 "
        "gradebook.db）/ the course gradebook's database, e.g. postgresql://user@host/db (default: "
        "$FLASH_COURSE_DB, else the course's gradebook.db)",
    )


def add_jobs_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs",
        type=int,
        help="同时评分的（学生, 单元）数（默认：CPU 上每核一个；GPU 上核数的四分之三，且每份至少 4 GiB 显存）/ "
        "(student, unit) pairs graded at once (default: one per core on CPU; on a GPU three quarters of the "
        "cores, with at least 4 GiB of GPU memory each)",
    )


def add_weaker_sandbox_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-weaker-sandbox",
        action="store_true",
        help="没有 bubblewrap 时用较弱的沙箱（unshare）评分，而不是拒绝；也可设 "
        "FLASH_COURSE_ALLOW_WEAKER_SANDBOX=1 / where bubblewrap does not work, grade under the weaker sandbox "
        "(unshare) instead of refusing; or set FLASH_COURSE_ALLOW_WEAKER_SANDBOX=1",
    )


def add_ray_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ray",
        nargs="?",
        const="auto",
        metavar="ADDRESS",
        help="在 Ray 集群上评分，每个（学生, 单元）一个任务（ADDRESS 为头节点的 主机:端口；省略则用本机所在的集群；"
        "需要 pip install '.[cluster]'）/ grade on a Ray cluster, one task per (student, unit) (ADDRESS: the "
        "head's host:port; without it, the cluster this machine is in; needs pip install '.[cluster]')",
    )


# Sub-command modules are imported on use: each pulls in torch or nbformat, which `check` must not need.
def _release():
    from course import release

    return release


def _grade():
    from course.grading import grade

    return grade


def _selftest():
    from course import selftest

    return selftest


def _catalogue():
    from course import catalogue

    return catalogue


def _bundle():
    from course import bundle

    return bundle


def _course(db: str | None = None, check: bool = True, exists: bool = True):
    """The course with its course folder (`--course-dir`), refused (`exists`) when it was named but does not exist,
    and (`check`) while the checkout still holds a semester's files; with `db`, its gradebook in that database
    (`--db`)."""
    from course.layout import open_course, refuse_missing_folder, refuse_old_state

    course = open_course()
    if exists:
        refuse_missing_folder(course)
    if check:
        refuse_old_state(course)
    return dataclasses.replace(course, db=db) if db else course


def _lms():
    from course.grading import lms

    return lms


def _lms_pull():
    from course.grading import lms_pull

    return lms_pull


def _handgrade():
    from course.grading import handgrade

    return handgrade


def _formgrader():
    from course.grading import formgrader

    return formgrader


def _feedback():
    from course.grading import feedback

    return feedback


def _similarity():
    from course.grading import similarity

    return similarity


def _stats():
    from course.grading import stats

    return stats


def _demo():
    from course import demo

    return demo


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.course_dir:  # for this run and every nbgrader run it starts
        from course.folder import ENV, course_folder

        os.environ[ENV] = str(course_folder(args.course_dir))
    try:
        return args.run(args)
    except (
        ValueError
    ) as error:  # bad input (unknown unit, missing folder, leak, …): a clear message, no traceback
        print(error)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: a clear word instead of a traceback
        from utils.messages import bilingual

        print(
            "\n"
            + bilingual(
                "已中断。评分会保留已评完的每一对（学生, 单元）：再运行同一条命令即可继续。",
                "interrupted. Grading keeps every (student, unit) pair it finished: run the same command again "
                "to go on.",
            )
        )
        return 130
