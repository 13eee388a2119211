"""`course grade --ray ADDRESS`: a class graded on a real two-node Ray cluster on this machine (a head and a second
node with its own temp folder, one CPU each) gives the local pool's scores with the same salt, records where each
pair ran, and survives the second node dying mid-grade (its pair runs again on the head, merged once) and a Ctrl-C
on the head (the same command again grades only what was not finished); bad addresses and version mismatches are
refused before anything changes; without --ray nothing imports Ray."""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import pytest
from pipeline_fixture import FIXTURE_COURSE, UNIT, course_copy, sample_class_with_blank

from course import ROOT, cli, doctor, selftest
from course.grading import grade, pool, resources
from course.grading.local_cluster import kill_node, local_cluster

if not os.environ.get("CI"):  # CI installs the cluster extra (course.sh test): there a missing Ray fails
    pytest.importorskip("ray")
import ray  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    """A head and a second node on this machine, each with its own short temp folder; the address, the second
    node, both nodes' names and the cluster."""
    with local_cluster(nodes=2, cpus=1) as running:
        names = {"head": running.head, "second": running.others[0]}
        yield running.address, running.processes[1], names, running


class Killer(threading.Thread):
    """Kills `node` once it runs its second pair (after one pair it graded to the end), noting whose it was."""

    def __init__(self, node: subprocess.Popen):
        super().__init__(daemon=True)
        self.node, self.seen, self.killed, self.done = node, [], None, threading.Event()

    def jobs(self) -> dict[int, str]:
        """{pid: student} of the grading jobs the node runs now."""
        found = {}
        try:
            procs = psutil.Process(self.node.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return found
        for proc in procs:
            try:
                argv = proc.cmdline()
            except psutil.Error:
                continue
            if "course.grading.worker" in argv:
                with contextlib.suppress(OSError, ValueError):
                    found[proc.pid] = json.loads(Path(argv[-2]).read_text())["student"]
        return found

    def run(self) -> None:
        while not self.done.is_set():
            for pid, student in self.jobs().items():
                if pid not in [p for p, _ in self.seen]:
                    self.seen.append((pid, student))
            if len({s for _, s in self.seen}) >= 2:
                time.sleep(2)  # mid-grade: its kernel is running
                self.killed = self.seen[-1][1]
                kill_node(self.node)
                return
            time.sleep(0.2)


def outcome(rows):
    return [(r.student, r.unit, r.score, r.max_score, r.status, r.cells) for r in rows]


@pytest.fixture(scope="module")
def graded(cluster, tmp_path_factory, class_graded_one_at_a_time):
    """The sample class plus a blank student, graded by the local pool (the session's grading) and then on the
    cluster with the same salt, where the second node is killed while it grades its second pair."""
    address, second, names, _ = cluster
    tmp = tmp_path_factory.mktemp("ray")
    class_folder = sample_class_with_blank(tmp)
    _, alone, local = class_graded_one_at_a_time
    mp = pytest.MonkeyPatch()
    mp.setenv("FLASH_COURSE_CELL_TIMEOUT", "10")
    same_salt = grade.Selection(salt=grade.grading_salt(alone))
    killer = Killer(second)
    killer.start()
    started = time.time()
    course = course_copy(tmp / "cluster")
    try:
        rows = grade.grade(course, class_folder, timeout=300, selection=same_salt, ray=address)
    finally:
        killer.done.set()
        mp.undo()
    return course, local, rows, killer, names, started


def test_the_cluster_gives_the_local_pools_scores(graded):
    _, local, rows, *_ = graded
    assert outcome(rows) == outcome(local)
    assert [r.node for r in local] == ["", "", "", ""]


def test_pairs_ran_on_both_nodes_and_each_pair_records_its_node(graded):
    course, _, rows, killer, names, _ = graded
    assert {r.node for r in rows} == {names["head"], names["second"]}
    lines = (course.root / "grades.csv").read_text().splitlines()
    assert lines[0].split(",")[8] == "node"
    assert {line.split(",")[8] for line in lines[1:]} == {names["head"], names["second"]}


def test_each_pair_says_the_seconds_ray_added_and_the_cluster_what_its_daemons_used(cluster, graded):
    _, local, rows, *_ = graded
    added = ("ray/pack", "ray/queued", "ray/unpack", "ray/pack back", "ray/place")
    for row in rows:
        assert all(row.seconds[key] >= 0 for key in added), row.seconds
        assert sum(row.seconds[key] for key in added) <= row.seconds["job"] + 0.1, row.seconds
    assert not [key for row in local for key in row.seconds if key.startswith("ray/")]
    used = cluster[3].daemon_cpu_seconds()
    assert {"raylet", "gcs_server"} <= set(used) and min(used.values()) >= 0, used
    assert "log_monitor" not in used, used  # started without one: nothing reads the workers' output
    assert not [name for name in used if name.startswith("ray::") and not name.endswith("Agent")], used


def test_a_pair_whose_node_died_mid_grade_is_graded_once_elsewhere(graded):
    course, _, rows, killer, names, started = graded
    assert killer.killed, f"the second node never ran a second pair: {killer.seen}"
    by_student = {r.student: r for r in rows}
    assert by_student[killer.killed].node == names["head"]
    assert all(r.status != "not graded" for r in rows)
    log = (course.autograded / "grading.log").read_text()
    for row in rows:
        assert log.count(f"######## {row.student}/{UNIT}\n") == 1
    progress = sorted(p.name for p in grade.progress_folder(course).glob("*.json"))
    assert progress == sorted(f"{r.student}__{UNIT}.json" for r in rows)
    for row in rows:
        assert (course.feedback / row.student / UNIT / "logsumexp.html").is_file()
    left = [p for p in Path(tempfile.gettempdir()).glob("course-*ray-*") if p.stat().st_mtime >= started]
    assert not left, left  # the dead attempt's copy on its node was swept by the next job there


def test_selftest_runs_on_the_cluster(cluster, graded):
    """After the fault (the head is the one node left): the solution scores full marks, the stubs nothing."""
    address, *_ = cluster
    cases, problems = selftest.run(FIXTURE_COURSE, [UNIT], jobs=1, attacks_only=True, ray=address)
    assert {case.student for case in cases} == {"solution", "stubs"}
    for case in cases:
        tests = selftest.points(FIXTURE_COURSE, UNIT, case.notebook)
        skipped = selftest.skipped(FIXTURE_COURSE, UNIT, case.notebook)
        assert case.verdict(tests, skipped) is None, (case.student, case.result)
    assert not problems


INTERRUPTIBLE = """
import sys
from pathlib import Path
from course.grading import grade
from course.layout import Course
course = Course(Path(sys.argv[1]), Path(sys.argv[2]))
grade.main(sys.argv[3], timeout=300, course=course, ray=sys.argv[4])
"""


def grading_jobs(course) -> dict[int, str]:
    """{pid: student} of the autograde jobs running for `course` on any node of this machine."""
    found = {}
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError, ValueError, IndexError):
            argv = proc.cmdline()
            if "course.grading.worker" in argv:
                request = json.loads(Path(argv[-2]).read_text())
                if request["action"] == "autograde" and str(course.root) in request["root"]:
                    found[proc.pid] = request["student"]
    return found


def completed_jobs(course) -> dict[str, int]:
    """{student: how many of their Ray jobs finished} over every run's sections of grading.log."""
    sections = (course.autograded / "grading.log").read_text().split("######## ")[1:]
    counts: dict[str, int] = {}
    for section in sections:
        student = section.split("/", 1)[0]
        counts[student] = counts.get(student, 0) + section.count("==== Ray node")
    return counts


def test_an_interrupted_cluster_run_resumes_where_it_stopped(
    cluster, graded, class_graded_one_at_a_time, capsys
):
    """Ctrl-C on the head once a pair is graded, while another grades on a node; the same command again grades
    only what was not finished: every pair graded once, with the local pool's scores (the same salt)."""
    address, *_ = cluster
    course, local, *_ = graded
    students = ["alice_correct", "dan_blank"]  # dan: a cheap pair (one blank notebook)
    class_folder = course.root.parent / "two"
    for student in students:
        shutil.copytree(course.root.parent / "class" / student, class_folder / student)
    resumed = course_copy(course.root.parent / "resumed")
    (resumed.root / ".grading_salt").write_text(grade.grading_salt(class_graded_one_at_a_time[1]))
    first = subprocess.Popen(
        [
            sys.executable,
            "-c",
            INTERRUPTIBLE,
            str(resumed.root),
            str(resumed.wrong),
            str(class_folder),
            address,
        ],
        cwd=ROOT,
        env=dict(os.environ, FLASH_COURSE_CELL_TIMEOUT="10"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    progress = grade.progress_folder(resumed)
    deadline = time.monotonic() + 300
    while not (list(progress.glob("*.json")) and grading_jobs(resumed)):
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()[0]
        time.sleep(0.2)
    before = {p.name: p.read_bytes() for p in progress.glob("*.json")}
    running = set(grading_jobs(resumed).values())
    os.killpg(first.pid, signal.SIGINT)  # Ctrl-C in the head's terminal
    out = first.communicate(timeout=120)[0]
    assert first.returncode != 0, out
    assert 1 <= len(before) < len(students) and running.isdisjoint(p.split("__")[0] for p in before)
    time.sleep(3)
    assert not grading_jobs(resumed)  # the interrupted pairs' jobs stopped on their nodes
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FLASH_COURSE_CELL_TIMEOUT", "10")
        rows = grade.grade(resumed, class_folder, timeout=300, ray=address)
    assert f"unchanged since graded, kept: {len(before)}" in capsys.readouterr().out
    assert outcome(rows) == outcome([r for r in local if r.student in students])
    assert {p.name: p.read_bytes() for p in progress.glob("*.json") if p.name in before} == before
    assert completed_jobs(resumed) == dict.fromkeys(students, 1)


def test_an_unreachable_address_is_refused_before_anything_changes(tmp_path):
    course = course_copy(tmp_path / "course")
    before = sorted(p.relative_to(course.root) for p in course.root.rglob("*"))
    started = time.monotonic()
    with pytest.raises(ValueError, match=r"cannot reach the Ray cluster at 127\.0\.0\.1:9") as error:
        grade.grade(course, tmp_path / "class", ray=f"127.0.0.1:{9}")
    assert "连不上 Ray 集群" in str(error.value)
    assert time.monotonic() - started < 30
    assert sorted(p.relative_to(course.root) for p in course.root.rglob("*")) == before


def test_a_version_mismatch_between_head_and_node_is_a_clear_error():
    head = {"ray": "2.60.0", "python": "3.11.7", "course": "abc"}
    nodes = [
        {"node": "10.0.0.2/1234abcd", "ray": "2.59.0", "python": "3.11.7", "course": "abc"},
        {"node": "10.0.0.3/5678abcd", "ray": "2.60.0", "python": "3.11.7", "course": "abc"},
    ]
    with pytest.raises(ValueError) as error:
        pool.check_versions(head, nodes)
    message = str(error.value)
    assert "10.0.0.2/1234abcd: ray 2.59.0 ≠ 2.60.0" in message
    assert "10.0.0.3" not in message
    assert "版本" in message and "must match" in message
    pool.check_versions(head, nodes[1:])


def test_a_node_whose_ray_sockets_the_sandbox_would_not_hide_is_refused():
    facts = [{"node": "a", "temp": "/tmp"}, {"node": "b", "temp": "/tmp"}]
    pool.check_sockets(["/tmp/ray/session_1/sockets/plasma_store", "/tmp/x/plasma_store"], facts)
    with pytest.raises(ValueError, match=r"b: /var/ray/session_1/sockets/plasma_store") as error:
        pool.check_sockets(["/tmp/ray/plasma_store", "/var/ray/session_1/sockets/plasma_store"], facts)
    assert "a:" not in str(error.value) and "沙箱" in str(error.value)


@pytest.mark.parametrize(
    ("nodes", "shape", "slots"),
    [
        ([{"cpus": 1, "gpus": 0, "gpu_gib": None}] * 2, (1.0, 0.0), 2),
        ([{"cpus": 16, "gpus": 1, "gpu_gib": 80.0}], (1.3333, 0.0833), 12),  # an H100 host: 12 at once
        (
            [{"cpus": 16, "gpus": 1, "gpu_gib": 80.0}, {"cpus": 64, "gpus": 0, "gpu_gib": None}],
            (1.3333, 0.0833),
            12,
        ),
        ([{"cpus": 16, "gpus": 1, "gpu_gib": 8.0}], (8.0, 0.5), 2),  # the GPU's memory bounds it
    ],
)
def test_a_pair_asks_for_the_share_of_a_node_that_the_default_jobs_gives_it(nodes, shape, slots):
    assert pool.task_shape(nodes) == shape
    assert pool.capacity(nodes, shape) == slots


def test_a_node_with_little_memory_per_core_is_said(capsys):
    """Ray runs as many jobs on a node as its cores allow: where that leaves each grading's cgroup less than it
    needs, the head names the node (a node of 16 cores whose gradings share 12 GiB: 16 jobs, 0.4 GiB each)."""
    nodes = [{"cpus": 16, "gpus": 0, "gpu_gib": None}, {"cpus": 16, "gpus": 0, "gpu_gib": None}]
    facts = [
        {"node": "10.0.0.7/1a2b3c4d", "memory_gib": 12.0},
        {"node": "10.0.0.8/5e6f7a8b", "memory_gib": 96.0},
    ]
    pool.warn_node_memory(nodes, facts, (1.0, 0.0))
    said = capsys.readouterr().out
    assert (
        "10.0.0.7/1a2b3c4d: 16 at once leave each grading 0.4 GiB" in said
        and "at most 6 on that node" in said
    )
    assert "10.0.0.8" not in said
    pool.warn_node_memory(nodes, [{"node": "a", "memory_gib": None}] * 2, (1.0, 0.0))  # no cgroups there
    assert capsys.readouterr().out == ""


def test_a_job_on_a_node_knows_how_many_jobs_its_host_runs_at_once(monkeypatch):
    """Each grading's memory cgroup is its share of the host's: a node's jobs of 4 CPUs on a 16-core host are 4."""
    seen = []
    monkeypatch.setattr(pool, "run_job", lambda *args, at_once: seen.append(at_once) or ({}, False))
    monkeypatch.setattr(resources, "cpu_count", lambda: 16)
    pool.run_in_copy(pool.pack([]), {}, 10, 4, [])
    assert seen == [4]


def test_a_job_on_a_node_does_not_inherit_rays_blocked_sigint(monkeypatch):
    """Ray starts its processes with SIGINT blocked; a job's kernel that inherited it took ~2.6 s more to shut
    down (jupyter_client interrupts it first), each notebook of each pair."""

    def job(request, timeout, log, threads, at_once=1):
        status = subprocess.run(
            [sys.executable, "-c", "print(open('/proc/self/status').read())"], capture_output=True, text=True
        ).stdout
        mask = int(next(line for line in status.splitlines() if line.startswith("SigBlk:")).split()[1], 16)
        return {"SIGINT blocked": bool(mask & 1 << (signal.SIGINT - 1))}, False

    def as_a_ray_worker():
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        found.append(pool.run_in_copy(pool.pack([]), {}, 10, 1, [])["results"])

    monkeypatch.setattr(pool, "run_job", job)
    found = []
    worker = threading.Thread(target=as_a_ray_worker)
    worker.start()
    worker.join()
    assert found == [{"SIGINT blocked": False}]


def test_what_a_node_wrote_replaces_the_heads_copy(tmp_path):
    node, head = tmp_path / "node", tmp_path / "head"
    (node / "out" / "a").mkdir(parents=True)
    (node / "out" / "a" / "x.txt").write_text("new")
    (head / "out" / "a").mkdir(parents=True)
    (head / "out" / "a" / "stale.txt").write_text("old")
    (head / "out" / "gone").mkdir()
    archive = pool.pack([node / "out" / "a", node / "out" / "gone"], node)
    pool.place(archive, (head / "out" / "a", head / "out" / "gone"), base=head)
    assert sorted(p.name for p in (head / "out" / "a").iterdir()) == ["x.txt"]
    assert not (head / "out" / "gone").exists()


def test_without_ray_nothing_imports_it():
    code = "import sys, course.grading.grade, course.demo, course.cli; print('ray' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "False"
    assert isinstance(pool.open_pool(None), pool.LocalPool)


def test_the_ray_option_takes_an_optional_address():
    parser = cli.build_parser()
    assert parser.parse_args(["grade", "class", "--ray"]).ray == "auto"
    assert parser.parse_args(["grade", "class", "--ray", "10.0.0.1:6379"]).ray == "10.0.0.1:6379"
    assert parser.parse_args(["grade", "class"]).ray is None
    assert parser.parse_args(["regrade", "s", "u", "--reason", "r", "--ray"]).ray == "auto"
    assert parser.parse_args(["selftest", "--ray", "h:1"]).ray == "h:1"


def test_course_check_says_whether_ray_is_there(monkeypatch):
    assert doctor.ray_line().startswith(doctor.OK) and f"Ray {ray.__version__}" in doctor.ray_line()
    monkeypatch.setattr(doctor, "version", lambda dist: None)
    assert "Ray not installed" in doctor.ray_line() and "未安装 Ray" in doctor.ray_line()
