"""Where the course's gradebook lives: nbgrader's SQLite file in the course (the default) or a PostgreSQL database
(`--db postgresql://user@host/db`, nbgrader's `db_url`), which graders on several machines can merge into at once.

Only the course's gradebook and the merges into it use the database; each grading job grades into a private SQLite
copy holding the units and its own pair's earlier work (`save_copy`). A merge is one transaction (`one_transaction`): nbgrader's own commits inside it only flush, and
on PostgreSQL it holds an advisory lock, so merges from several graders run one after another, and a merge killed
half-way leaves the gradebook as it was (the server rolls the transaction back; the pair is graded again next run).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from course.layout import Course

# Nothing heavy at import (`utils` imports torch): nbgrader_config.py reads `for_nbgrader` in every nbgrader run.

COURSE_ID = "flash-attention-first-principles"  # nbgrader_config.py's course_id
MERGE_LOCK = 35_0003  # the advisory lock every merge and unit registration holds on PostgreSQL
CONNECT_SECONDS = 10
RECORD = ".gradebook_db"  # in the course root: the database its grades are in (see `settle`)
# Tests only: a merge creates `<folder>/<student>__<unit>` inside its transaction and waits while it exists.
TEST_PAUSE = "FLASH_COURSE_TEST_MERGE_PAUSE"


def url(course: Course) -> str:
    """The SQLAlchemy URL of the course's gradebook."""
    return sqlalchemy_url(course.db) if course.db else f"sqlite:///{course.gradebook}"


def sqlalchemy_url(given: str) -> str:
    """The URL nbgrader is given: `postgresql://` (or `postgres://`) means psycopg 3, the driver the course installs."""
    return re.sub(r"^postgres(ql)?://", "postgresql+psycopg://", given.strip())


def shown(given: str) -> str:
    """The URL without its password (in the user part, or libpq's `password=`/`sslpassword=` parameters), for
    messages and the course's `.gradebook_db` record."""
    hidden = re.sub(r"(://[^:/@]*):.*@", r"\1:***@", given)
    return re.sub(r"(?i)([?&](?:ssl)?password=)[^&#]*", r"\1***", hidden)


def is_postgresql(given: str) -> bool:
    return sqlalchemy_url(given).startswith("postgresql+")


def check(given: str) -> None:
    """Connect once before anything is graded: a URL that is no database of ours, a wrong password or an unreachable
    server is a clear error naming the URL (without its password)."""
    import sqlalchemy

    from utils.messages import bilingual

    if not (is_postgresql(given) or given.startswith("sqlite:///")):
        raise ValueError(
            bilingual(
                f"成绩簿数据库 URL 无效：{shown(given)}（应为 postgresql://用户@主机:端口/数据库 或 sqlite:///路径）",
                f"not a gradebook database URL: {shown(given)} "
                "(expected postgresql://user@host:port/database or sqlite:///path)",
            )
        )
    options = {"connect_args": {"connect_timeout": CONNECT_SECONDS}} if is_postgresql(given) else {}
    try:
        engine = sqlalchemy.create_engine(sqlalchemy_url(given), **options)
        with engine.connect():
            pass
        engine.dispose()
    except ImportError as error:
        raise ValueError(
            bilingual(
                f"缺少 PostgreSQL 驱动（{error}）：请安装 pip install -e '.[cluster]'",
                f"the PostgreSQL driver is missing ({error}): pip install -e '.[cluster]'",
            )
        ) from None
    except (sqlalchemy.exc.SQLAlchemyError, ValueError) as error:
        reason = " ".join(str(getattr(error, "orig", None) or error).split())
        password = sqlalchemy.engine.make_url(sqlalchemy_url(given)).password if "@" in given else None
        if password:
            reason = reason.replace(password, "***")
        raise ValueError(
            bilingual(
                f"无法连接成绩簿数据库 {shown(given)}：{reason}（什么都没有评分）",
                f"cannot connect to the gradebook database {shown(given)}: {reason} (nothing was graded)",
            )
        ) from None


def settle(course: Course) -> None:
    """Before a run reads or writes the course's gradebook: its database URL connects (`check`), and it is the one the
    course's grades are in. The first run with `--db` writes the URL (without its password) to `.gradebook_db` in the
    course; a later run with another URL, or without one, is refused instead of grading into another gradebook."""
    from utils.messages import bilingual

    if course.db:
        check(course.db)
    record = course.root / RECORD
    kept = record.read_text(encoding="utf-8").strip() if record.is_file() else ""
    given = shown(sqlalchemy_url(course.db)) if course.db else ""
    if kept and kept != given:
        raise ValueError(
            bilingual(
                f"这门课的成绩簿在 {kept}，本次运行用的是 {given or course.gradebook}：请给出同样的 --db"
                f"（或 FLASH_COURSE_DB）；确实要换库，先删除 {record}",
                f"this course's gradebook is in {kept}, this run's is {given or course.gradebook}: give the same --db "
                f"(or FLASH_COURSE_DB); to move to another, delete {record} first",
            )
        )
    if given and not kept:
        course.root.mkdir(parents=True, exist_ok=True)
        record.write_text(given + "\n", encoding="utf-8")


def for_nbgrader(root: Path) -> str | None:
    """The `db_url` nbgrader itself (formgrader's hand grading, `nbgrader generate_feedback`, `nbgrader db`, run from
    the checkout) uses in the course folder `root`: the database its RECORD names, with the password of
    FLASH_COURSE_DB when that names the same database, else none (libpq takes it from PGPASSWORD or ~/.pgpass);
    None for a course on its SQLite file."""
    record = root / RECORD
    if not record.is_file():
        return None
    kept = record.read_text(encoding="utf-8").strip()
    given = os.environ.get("FLASH_COURSE_DB", "")
    if given and shown(sqlalchemy_url(given)) == kept:
        return sqlalchemy_url(given)
    without = re.sub(r"(://[^:/@]*):\*\*\*@", r"\1@", kept)
    return re.sub(r"(?i)(?<=[?&])(?:ssl)?password=\*\*\*(&|$)", "", without).rstrip("?&")


def save_copy(course: Course, path: Path, pair: tuple[str, str] | None = None) -> bool:
    """Copy the course's gradebook into the SQLite file `path`; False when it has none yet. `pair` (student, unit):
    only the units and that student's work on that unit (a grading job's private gradebook: the hand grades its
    feedback shows, and nobody else's grades)."""
    if not course.db and not course.gradebook.exists():
        return False
    if course.db or pair:
        snapshot(url(course), path, pair)
    else:
        shutil.copy2(course.gradebook, path)
    return True


# nbgrader's tables of students and their work (the others hold the course and its units)
STUDENTS_TABLES = {"student", "submitted_assignment", "submitted_notebook", "grade", "comment"}


def pair_rows(student: str, unit: str) -> dict:
    """{table of STUDENTS_TABLES: the condition that picks `student`'s work on `unit` in it}."""
    import sqlalchemy
    from nbgrader.api import Base

    table = Base.metadata.tables
    assignment = sqlalchemy.select(table["assignment"].c.id).where(table["assignment"].c.name == unit)
    submitted = table["submitted_assignment"]
    submission = sqlalchemy.select(submitted.c.id).where(
        submitted.c.student_id == student, submitted.c.assignment_id.in_(assignment)
    )
    notebook = table["submitted_notebook"]
    notebooks = sqlalchemy.select(notebook.c.id).where(notebook.c.assignment_id.in_(submission))
    return {
        "student": table["student"].c.id == student,
        "submitted_assignment": submitted.c.id.in_(submission),
        "submitted_notebook": notebook.c.id.in_(notebooks),
        "grade": table["grade"].c.notebook_id.in_(notebooks),
        "comment": table["comment"].c.notebook_id.in_(notebooks),
    }


def snapshot(source_url: str, path: Path, pair: tuple[str, str] | None = None) -> None:
    """Copy every table of nbgrader's gradebook at `source_url` (`pair` (student, unit): of STUDENTS_TABLES, only
    that student's work on that unit) into a new SQLite file, in one read transaction."""
    import sqlalchemy
    from nbgrader.api import Base

    only = pair_rows(*pair) if pair else {}
    source = sqlalchemy.create_engine(source_url)
    target = sqlalchemy.create_engine(f"sqlite:///{path}")
    if pair:  # a grading job's private copy, made for every pair
        sqlalchemy.event.listen(target, "connect", unsynced)
    try:
        Base.metadata.create_all(target)
        with source.connect() as read, target.begin() as write:
            if is_postgresql(source_url):
                read.execute(sqlalchemy.text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"))
            present = set(sqlalchemy.inspect(read).get_table_names())  # none yet in a new database
            for table in (t for t in Base.metadata.sorted_tables if t.name in present):
                query = table.select().where(only[table.name]) if table.name in only else table.select()
                rows = [dict(row) for row in read.execute(query).mappings()]
                if rows:
                    write.execute(table.insert(), rows)
            if "alembic_version" in present:
                version = read.execute(sqlalchemy.text("SELECT version_num FROM alembic_version")).scalar()
                write.execute(
                    sqlalchemy.text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
                )
                write.execute(sqlalchemy.text("INSERT INTO alembic_version VALUES (:v)"), {"v": version})
    finally:
        source.dispose()
        target.dispose()


def unsynced(connection, _record) -> None:
    """A grading job's private copy is written without waiting for the disk (no fsync, the journal in memory): it
    is whole once `snapshot` returns, and one a crash cut short is in a run's temporary folder, which nobody reads
    again. Each commit's fsync made a pair's copy cost 0.28 s of wall clock for 0.04 s of CPU (measured on the
    2-core CI machine). Other copies (a backup of a PostgreSQL gradebook among them) wait for the disk."""
    connection.execute("PRAGMA synchronous = OFF")
    connection.execute("PRAGMA journal_mode = MEMORY")


@contextlib.contextmanager
def readable(course: Course, pair: tuple[str, str] | None = None):
    """A SQLite file holding the course's gradebook as it is now (itself, or a copy of the database; `pair`: of the
    students' work, only that pair's, `save_copy`)."""
    if not course.db:
        yield course.gradebook
        return
    with tempfile.TemporaryDirectory(prefix="course-gradebook-") as tmp:
        save_copy(course, Path(tmp) / "gradebook.db", pair)
        yield Path(tmp) / "gradebook.db"


class _Flushing:
    """nbgrader's session with `commit` turned into `flush`: its API commits as it goes, a merge commits once."""

    def __init__(self, session):
        self.session = session

    def commit(self) -> None:
        self.session.flush()

    def __getattr__(self, name: str):
        return getattr(self.session, name)


@contextlib.contextmanager
def one_transaction(gradebook):
    """Whatever the body does to nbgrader's `gradebook` is committed at its end, all of it or (on an error or a kill)
    none of it; on PostgreSQL the body runs alone among the course's merges (an advisory lock, released with the
    transaction, even when the process dies)."""
    import sqlalchemy

    session = gradebook.db
    gradebook.db = _Flushing(session)
    try:
        if gradebook.engine.dialect.name == "postgresql":
            session.execute(sqlalchemy.text("SELECT pg_advisory_xact_lock(:key)"), {"key": MERGE_LOCK})
        yield
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        gradebook.db = session


@contextlib.contextmanager
def exclusive(db_url: str):
    """On PostgreSQL, hold the merges' advisory lock for the body (registering units: several graders at once would
    insert the same rows); elsewhere nothing."""
    if not db_url.startswith("postgresql"):
        yield
        return
    import sqlalchemy

    engine = sqlalchemy.create_engine(db_url)
    try:
        with engine.connect() as held:
            held.execute(sqlalchemy.text("SELECT pg_advisory_lock(:key)"), {"key": MERGE_LOCK})
            held.commit()
            try:
                yield
            finally:
                held.execute(sqlalchemy.text("SELECT pg_advisory_unlock(:key)"), {"key": MERGE_LOCK})
                held.commit()
    finally:
        engine.dispose()


def pause_for_tests(student: str, unit: str) -> None:
    """The tests' hook (TEST_PAUSE): wait inside the merge's transaction while the test holds it there."""
    folder = os.environ.get(TEST_PAUSE)
    if not folder:
        return
    flag = Path(folder) / f"{student}__{unit}"
    flag.touch()
    while flag.exists():
        time.sleep(0.05)
