"""A Ray cluster of several nodes on this one machine, started with `ray start` (each node with its own temp folder,
in a process group of its own): what the Ray tests and `benchmarks.grading_scale` grade on. A real cluster is
started by its administrator on every machine (instructor guide 5.1).

    with local_cluster(nodes=2, cpus=1) as cluster:
        grade.grade(course, class_folder, ray=cluster.address)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from course.grading.runner import kill_tree

RAY = str(Path(sys.executable).with_name("ray"))
AGENTS = ["dashboard-agent-grpc", "dashboard-agent-listen", "runtime-env-agent", "metrics-export"]
HEAD_RESOURCE = "node:__internal_head__"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_node(temp: Path, cpus: int, *options: str) -> subprocess.Popen:
    """`ray start --block` in a process group of its own, without a log monitor (`RayPool` never shows the
    workers' output). Its agents get their ports up front: on a loaded machine the raylet gives up waiting for an
    agent to report a port of its own choosing."""
    return subprocess.Popen(
        [
            RAY,
            "start",
            "--block",
            f"--num-cpus={cpus}",
            f"--temp-dir={temp}",
            f"--object-store-memory={100 * 2**20}",
            "--disable-usage-stats",
            "--include-log-monitor=false",
            *(f"--{agent}-port={free_port()}" for agent in AGENTS),
            *options,
        ],
        env={
            **os.environ,
            "RAY_AUTH_MODE": "disabled",
        },  # a token in ~/.ray would turn it on for the head alone
        stdout=(temp / "start.log").open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def start_log(temp: Path) -> str:
    """The end of a node's `ray start` output: why it did not start."""
    return (temp / "start.log").read_text(errors="replace")[-3000:]


def kill_node(node: subprocess.Popen) -> None:
    """SIGKILL the node's process group and every process it started (a raylet, its workers, their jobs)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(node.pid, signal.SIGKILL)
    kill_tree(node.pid)
    node.wait()


def wait_started(node: subprocess.Popen, temp: Path, deadline: float) -> bool:
    """Whether `ray start` says its node runs (False: it gave up, e.g. its raylet registered too late)."""
    while "Ray runtime started" not in (temp / "start.log").read_text(errors="replace"):
        if time.monotonic() > deadline:
            raise TimeoutError(f"ray start did not finish:\n{start_log(temp)}")
        if node.poll() is not None:
            return False
        time.sleep(1)
    return True


def start_joined(temp: Path, deadline: float, cpus: int, *options: str) -> subprocess.Popen:
    """A node that started, tried again while `ray start` gives up: its raylet waits 15 s at most for the node's
    dashboard agent to start (a fixed limit, ray-project/ray#65983), which a loaded machine can exceed."""
    while True:
        node = start_node(temp, cpus, *options)
        if wait_started(node, temp, deadline):
            return node
        kill_node(node)


def alive_nodes(address: str) -> list[dict]:
    import ray

    ray.init(address=address, logging_level="ERROR", log_to_driver=False)
    try:
        return [n for n in ray.nodes() if n["Alive"]]
    finally:
        ray.shutdown()


def node_name(node: dict) -> str:
    """A node as `grades.csv`'s `node` column names it: its address and the start of its id."""
    return f"{node['NodeManagerAddress']}/{node['NodeID'][:8]}"


@dataclass
class Cluster:
    address: str
    processes: list[subprocess.Popen]  # the head's `ray start` first
    head: str = ""  # node names, as grades.csv records them
    others: list[str] = field(default_factory=list)

    def daemon_cpu_seconds(self) -> dict[str, float]:
        """The CPU seconds Ray's own processes used so far ("raylet", "gcs_server", "dashboard", ...; the nodes'
        together): not its workers ("ray::IDLE", "ray::run_on_node") nor the jobs they run."""
        import psutil

        found, used = [], {}
        for node in self.processes:
            with contextlib.suppress(psutil.NoSuchProcess):  # a node killed on purpose
                found.append(psutil.Process(node.pid))
        while found:
            process = found.pop()
            try:
                name = process_name(process)
                if name.startswith("ray::") and not name.endswith("Agent"):
                    continue
                times = process.cpu_times()
                found += process.children()
            except psutil.NoSuchProcess:
                continue
            used[name] = used.get(name, 0.0) + times.user + times.system
        return used


def process_name(process) -> str:
    """A Ray process's name: its program's, or its script's for Python ("dashboard", "monitor")."""
    script = next((Path(arg).stem for arg in process.cmdline()[1:3] if arg.endswith(".py")), None)
    return script or process.name()


@contextlib.contextmanager
def local_cluster(
    nodes: int = 2, cpus: int = 1, start_timeout: float = 300, gpus: int = 0
) -> Iterator[Cluster]:
    """A head and `nodes - 1` more nodes on this machine, `cpus` CPUs and `gpus` GPUs each (Ray takes the first
    `gpus` of `CUDA_VISIBLE_DEVICES`); every node is killed on the way out."""
    import ray

    temps = [Path(tempfile.mkdtemp(prefix=f"rn{i}", dir="/tmp")) for i in range(nodes)]  # short: socket paths
    port = free_port()
    cluster = Cluster(
        f"{ray.util.get_node_ip_address()}:{port}", []
    )  # the address Ray finds for this machine
    try:
        deadline = time.monotonic() + start_timeout
        head = ("--head", f"--port={port}", "--include-dashboard=false")
        cluster.processes.append(start_joined(temps[0], deadline, cpus, f"--num-gpus={gpus}", *head))
        for temp in temps[1:]:
            joined = (f"--num-gpus={gpus}", f"--address={cluster.address}")
            cluster.processes.append(start_joined(temp, deadline, cpus, *joined))
        alive = alive_nodes(cluster.address)
        if len(alive) != nodes:
            raise RuntimeError(f"{len(alive)} of {nodes} Ray nodes alive")
        cluster.head = next(node_name(n) for n in alive if HEAD_RESOURCE in n["Resources"])
        cluster.others = [node_name(n) for n in alive if HEAD_RESOURCE not in n["Resources"]]
        yield cluster
    finally:
        for process in reversed(cluster.processes):
            kill_node(process)
        for temp in temps:
            shutil.rmtree(temp, ignore_errors=True)
