"""Where one grading job runs: here, in a child process (`LocalPool`, the default), or as a task on a node of a Ray
cluster (`RayPool`, `course grade --ray [ADDRESS]`). Both run `course.grading.runner.run_job`, so the judge and
the sandbox are the same wherever a job lands.

A Ray job gets its files through Ray's object store, not a shared folder: the head packs what the job reads (the
unit's source, the student's submission, a private copy of the gradebook) into one archive; the node unpacks it
into a private temporary folder (mode 0700, hidden from the sandbox as the local job folders are), grades there,
and sends back what the job wrote (autograded/ and feedback/ files, the private gradebook, the log). The cluster
needs no shared file system, a node sees only the submissions it grades, and an attempt that dies half-way has
written nothing into the course: the head places a job's files and merges its gradebook once, from the attempt
that finished. A task whose node dies is run again elsewhere (Ray's `max_retries`), at most `RETRIES` times more.

Every node runs the course from its own checkout and environment (`bash course.sh check`, then `.venv/bin/ray
start`); entering `RayPool` refuses, before anything is graded, an address that does not answer, nodes that run
another Ray, Python or course version than the head, and nodes whose Ray sockets the sandbox would not hide.
"""

from __future__ import annotations

import contextlib
import io
import os
import platform
import shutil
import signal
import socket
import tarfile
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from course.grading import resources
from course.grading.runner import JOB_PREFIX, run_job
from utils.messages import bilingual

RETRIES = 2  # a task whose node or worker process dies is run again at most this many times
# A request's folders, rewritten for the node's copy of them.
PATH_KEYS = ("root", "source", "gradebook", "judge_reports")
CONNECT_SECONDS = 5.0
# What one job's outputs may unpack to on the head (a submission is at most 128 MiB, a graded notebook's outputs 8).
OUTPUT_BYTES = 1 << 30


class NotGraded(Exception):
    """A job that no node could finish (its nodes died, it was retried as often as allowed): the reason."""


@dataclass
class Job:
    """One `run_job` request with the files it reads (`inputs`) and writes (`outputs`), absolute paths here;
    `seconds`: what the pool spent around the job, filled by a Ray pool (`RayPool.run`)."""

    request: dict
    timeout: float
    log: Path
    threads: int | None = None
    at_once: int = 1  # jobs the local pool runs at once (a Ray node counts its own)
    inputs: tuple[Path, ...] = ()
    outputs: tuple[Path, ...] = ()
    seconds: dict[str, float] = field(default_factory=dict)


class LocalPool:
    """Today's pool: each job is a child process of this machine, pinned to the GPU that runs the fewest jobs when
    the machine has several (`visible_gpus`); `slots` None lets the caller choose."""

    slots: int | None = None

    def __init__(self, gpus: list[str] | None = None):
        self.gpus = visible_gpus() if gpus is None else gpus
        self.running = dict.fromkeys(self.gpus, 0)
        self.lock = threading.Lock()

    def __enter__(self) -> LocalPool:
        return self

    def __exit__(self, *exc) -> None:
        pass

    def stop(self) -> None:
        """Nothing to cancel: the running jobs got the interrupt too (they are in this process group)."""

    def run(self, job: Job) -> tuple[dict, bool, str]:
        """(results, timed_out, where) of a job; where: "gpu N" on a machine of several GPUs, else ""."""
        gpu = self.take_gpu()
        try:
            results, timed_out = run_job(job.request, job.timeout, job.log, job.threads, gpu, job.at_once)
        finally:
            self.give_back(gpu)
        return results, timed_out, f"gpu {gpu}" if len(self.gpus) > 1 else ""

    def take_gpu(self) -> str | None:
        """The GPU running the fewest jobs (the first of them on a tie), None without GPUs."""
        if not self.gpus:
            return None
        with self.lock:
            gpu = min(self.gpus, key=self.running.__getitem__)
            self.running[gpu] += 1
        return gpu

    def give_back(self, gpu: str | None) -> None:
        if gpu is not None:
            with self.lock:
                self.running[gpu] -= 1


def visible_gpus() -> list[str]:
    """The GPUs a local run spreads its jobs over, named as `CUDA_VISIBLE_DEVICES` names them (every GPU of the
    machine when it is unset); none on a CPU run."""
    import torch

    import utils

    if not utils.mode().is_gpu:
        return []
    count = torch.cuda.device_count()
    if named := os.environ.get("CUDA_VISIBLE_DEVICES"):
        return [name.strip() for name in named.split(",") if name.strip()][:count]
    return [str(index) for index in range(count)]


def pack(paths: list[Path], base: Path = Path("/")) -> bytes:
    """A gzipped tar of the files and folders in `paths` that exist, named by their path under `base`."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in paths:
            if path.exists():
                tar.add(path, arcname=str(path.relative_to(base)))
    return buffer.getvalue()


def unpack(archive: bytes, base: Path, keep=tarfile.data_filter) -> None:
    """Extract `pack`'s archive under `base` through the tarfile filter `keep` (by default the "data" filter: no
    links out, no devices, no absolute names)."""
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        tar.extractall(base, filter=keep)


def plain_within(limit: int):
    """The tarfile filter for what a node sends back: the "data" filter, then plain files and folders only (a link
    moved into the course would point at whatever its name reaches there: the salt, another student's folder),
    at most `limit` bytes in all, judged from the headers before anything is written."""
    total = 0

    def keep(member: tarfile.TarInfo, base: str) -> tarfile.TarInfo:
        nonlocal total
        member = tarfile.data_filter(member, base)
        if not (member.isfile() or member.isdir()):
            raise ValueError(
                bilingual(
                    f"节点送回的 {member.name} 是链接或特殊文件：只接受普通文件和文件夹（什么都没有放入课程）",
                    f"a node sent back {member.name}, a link or a special file: only plain files and folders are "
                    "taken (nothing was placed in the course)",
                )
            )
        total += member.size
        if total > limit:
            raise ValueError(
                bilingual(
                    f"节点送回的文件超过 {limit >> 20} MiB（什么都没有放入课程）",
                    f"a node sent back more than {limit >> 20} MiB (nothing was placed in the course)",
                )
            )
        return member

    return keep


def node_name() -> str:
    """Which node this is: its address and the start of its Ray node id (two nodes may share an address)."""
    import ray

    context = ray.get_runtime_context()
    return f"{ray.util.get_node_ip_address()}/{context.get_node_id()[:8]}"


def node_facts() -> dict:
    """What a node runs (compared with the head's before grading) and what it has."""
    import ray

    from course.grading import semester
    from course.judge import sandbox

    return {
        "node": node_name(),
        "temp": str(sandbox.temp_folder()),
        "ray": ray.__version__,
        "python": platform.python_version(),
        "course": semester.course_version(),
        "cpus": resources.cpu_count(),
        "gpu_gib": resources.gpu_memory_gib(),
        "memory_gib": resources.gradings_memory_gib(),
    }


def run_in_copy(archive: bytes, request: dict, timeout: float, threads: int, outputs: list[str]) -> dict:
    """Run `request` in a private copy of its files (`pack`ed by their absolute paths); the results, the log and
    an archive of what it wrote, and its seconds (unpacking, packing back, in all). The copy is a job folder of
    this process: if the node dies, the next job there removes it (`runner.sweep_abandoned_jobs`)."""
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"{JOB_PREFIX}{os.getpid()}-ray-") as tmp:
        mirror = Path(tmp)
        unpack(archive, mirror)
        unpacked = time.monotonic()
        here = {key: str(mirror) + value if key in PATH_KEYS else value for key, value in request.items()}
        log = mirror / "job.log"
        with sigint_unblocked():
            results, timed_out = run_job(here, timeout, log, threads, at_once=node_jobs_at_once(threads))
        ran = time.monotonic()
        written = pack([mirror / name.lstrip("/") for name in outputs], mirror)
        return {
            "results": results,
            "timed_out": timed_out,
            "log": log.read_text(encoding="utf-8", errors="replace") if log.is_file() else "",
            "outputs": written,
            "seconds": {
                "unpack": unpacked - began,
                "pack back": time.monotonic() - ran,
                "task": time.monotonic() - began,
            },
        }


@contextlib.contextmanager
def sigint_unblocked():
    """SIGINT unblocked in this thread meanwhile, so that the processes it starts do not inherit Ray's mask (Ray
    starts its processes with SIGINT blocked): jupyter_client interrupts a kernel before shutting it down, and a
    kernel that blocked SIGINT took ~2.6 s more to end (measured), about the 2.5 s jupyter_client waits before it
    sends SIGTERM, each notebook of each pair."""
    blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if blocked:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def node_jobs_at_once(threads: int) -> int:
    """The most jobs of `threads` CPUs each that this host runs at once (every Ray node it holds together)."""
    return max(1, resources.cpu_count() // max(1, threads))


def run_on_node(archive: bytes, request: dict, timeout: float, threads: int, outputs: list[str]) -> dict:
    """The Ray task: `run_in_copy` on the node where it lands, which it names with the GPU Ray gave the task
    ("10.0.0.7/1a2b3c4d gpu 1"; Ray pins the task to it through `CUDA_VISIBLE_DEVICES`)."""
    import ray

    gpus = ",".join(map(str, ray.get_gpu_ids()))
    where = node_name() + (f" gpu {gpus}" if gpus else "")
    return run_in_copy(archive, request, timeout, threads, outputs) | {"node": where}


def place(archive: bytes, outputs: tuple[Path, ...], base: Path = Path("/")) -> None:
    """Make each of `outputs` here what the node's job left there, named by its path under `base` (removed
    where it left nothing). Nothing a node sends is trusted: a link, a special file or more than OUTPUT_BYTES is
    refused (ValueError) before any output changes; members outside `outputs` are never placed."""
    with tempfile.TemporaryDirectory(prefix="course-ray-back-") as tmp:
        unpack(archive, Path(tmp), plain_within(OUTPUT_BYTES))
        for path in outputs:
            made = Path(tmp) / path.relative_to(base)
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
            if made.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(made, path)


def check_versions(head: dict, nodes: list[dict]) -> None:
    """Refuse nodes whose Ray, Python or course version differs from the head's (a node with another course
    version would grade with other tests; one with another Ray may not run the task at all)."""
    wrong = [
        f"{node['node']}: {what} {node[what]} ≠ {head[what]}"
        for node in nodes
        for what in ("ray", "python", "course")
        if node[what] != head[what]
    ]
    if wrong:
        raise ValueError(
            bilingual(
                "Ray 集群中有节点的版本与本机（头）不同：Ray、Python 和课程的版本必须一致（在该节点上更新检出并运行 "
                "bash course.sh check，再 ray start）",
                "nodes of the Ray cluster run other versions than this machine (the head): Ray, Python and the "
                "course must match (update the node's checkout, run bash course.sh check, then ray start again)",
            )
            + "\n  "
            + "\n  ".join(wrong)
        )


def check_sockets(sockets: list[str], facts: list[dict]) -> None:
    """Refuse a node whose Ray sockets (its object store holds other students' files) lie outside its temp folder:
    the sandbox's fallback hides that folder from student code, not any other."""
    exposed = [
        f"{found['node']}: {socket_path}"
        for socket_path, found in zip(sockets, facts, strict=True)
        if not Path(socket_path).resolve().is_relative_to(found["temp"])
    ]
    if exposed:
        raise ValueError(
            bilingual(
                "这些节点的 Ray 套接字不在其临时文件夹中，沙箱的后备机制无法对学生代码隐藏它们：请用默认的临时文件夹"
                "（/tmp/ray）或 /tmp 下的 --temp-dir 重新 ray start",
                "these nodes keep Ray's sockets outside their temp folder, where the sandbox's fallback would not "
                "hide them from student code: ray start them again with the default temp folder (/tmp/ray) or a "
                "--temp-dir under /tmp",
            )
            + "\n  "
            + "\n  ".join(exposed)
        )


def reachable(address: str) -> bool:
    """Whether something listens at HOST:PORT (Ray itself waits minutes for an address that never answers)."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), CONNECT_SECONDS):
            return True
    except (OSError, ValueError):
        return False


def floor4(x: float) -> float:
    """Rounded down to Ray's resource granularity (1/10000)."""
    return int(x * 10_000) / 10_000


def task_shape(nodes: list[dict]) -> tuple[float, float]:
    """(CPUs, GPUs) one job asks for: one CPU on a cluster without GPUs; with GPUs, the share of a GPU node that
    today's default `--jobs` gives one job there (`resources.default_jobs`; the largest share over the GPU nodes), so
    every job lands on a GPU node. A node is {"cpus", "gpus" (Ray's counts), "gpu_gib" (one GPU's memory)}."""
    shares = []
    for node in nodes:
        if node["gpus"]:
            per_gpu = node["cpus"] / node["gpus"]
            at_once = resources.default_jobs(1 << 30, int(per_gpu), node["gpu_gib"] or 0.0)
            shares.append((per_gpu / at_once, 1 / at_once))
    if not shares:
        return 1.0, 0.0
    return floor4(max(c for c, _ in shares)), floor4(max(g for _, g in shares))


def capacity(nodes: list[dict], shape: tuple[float, float]) -> int:
    """How many jobs of `shape` the nodes run at once."""
    cpus, gpus = shape
    return max(1, sum(min(int(n["cpus"] / cpus), int(n["gpus"] / gpus) if gpus else 1 << 30) for n in nodes))


def warn_node_memory(nodes: list[dict], facts: list[dict], shape: tuple[float, float]) -> None:
    """Say which nodes run so many jobs of `shape` at once (their cores decide) that each grading's memory cgroup
    gets less RAM than a grading needs (`resources.warn_memory`): a node with little RAM per core."""
    for node, fact in zip(nodes, facts, strict=True):
        if fact.get("memory_gib") is not None:
            device = "gpu" if node["gpus"] else "cpu"
            resources.warn_memory(capacity([node], shape), fact["memory_gib"], device, fact["node"])


class RayPool:
    """Jobs as Ray tasks on a cluster (`with RayPool(address) as pool:` connects, checks, disconnects)."""

    def __init__(self, address: str):
        self.address = address
        self.running: set = set()

    def __enter__(self) -> RayPool:
        try:
            import ray
        except ImportError:
            raise ValueError(
                bilingual(
                    "--ray 需要 Ray：pip install '.[cluster]'（或 pip install ray）",
                    "--ray needs Ray: pip install '.[cluster]' (or pip install ray)",
                )
            ) from None
        if self.address != "auto" and not reachable(self.address):
            raise ValueError(
                bilingual(
                    f"连不上 Ray 集群 {self.address}（{CONNECT_SECONDS:g} 秒内无应答）：地址对吗？头节点启动了吗（ray start --head）？",
                    f"cannot reach the Ray cluster at {self.address} (no answer in {CONNECT_SECONDS:g} s): "
                    "is the address right, is the head started (ray start --head)?",
                )
            )
        try:
            ray.init(address=self.address, logging_level="ERROR", log_to_driver=False)
        except (ConnectionError, RuntimeError) as error:
            raise ValueError(
                bilingual(
                    f"无法连接 Ray 集群 {self.address}：{error}",
                    f"cannot join the Ray cluster at {self.address}: {error}",
                )
            ) from None
        try:
            self.check()
        except BaseException:
            ray.shutdown()
            raise
        return self

    def check(self) -> None:
        """Ask every node what it runs and has; refuse a node whose versions differ from the head's."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from course.grading import semester

        listed = [n for n in ray.nodes() if n["Alive"]]
        probe = ray.remote(node_facts)
        asked = [
            probe.options(
                num_cpus=0,
                num_gpus=0.0001 if n["Resources"].get("GPU") else 0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False),
            ).remote()
            for n in listed
        ]
        alive, facts = [], []
        for node, answer in zip(listed, asked, strict=True):
            try:
                facts.append(ray.get(answer))
            except (ray.exceptions.TaskUnschedulableError, ray.exceptions.NodeDiedError):
                continue  # a node that died before Ray noticed (it still listed it): it grades nothing
            alive.append(node)
        if not alive:
            raise ValueError(bilingual("Ray 集群里没有活着的节点", "the Ray cluster has no live node"))
        head = {
            "ray": ray.__version__,
            "python": platform.python_version(),
            "course": semester.course_version(),
        }
        check_versions(head, facts)
        check_sockets([n["ObjectStoreSocketName"] for n in alive], facts)
        nodes = [
            {
                "cpus": n["Resources"].get("CPU", 0),
                "gpus": n["Resources"].get("GPU", 0),
                "gpu_gib": f["gpu_gib"],
            }
            for n, f in zip(alive, facts, strict=True)
        ]
        self.shape = task_shape(nodes)
        self.slots = capacity(nodes, self.shape)
        warn_node_memory(nodes, facts, self.shape)
        self.threads = max(1, int(self.shape[0]))
        self.task = ray.remote(run_on_node)

    def __exit__(self, *exc) -> None:
        import ray

        ray.shutdown()

    def run(self, job: Job) -> tuple[dict, bool, str]:
        """(results, timed_out, node) of a job run as a Ray task; NotGraded when no attempt finished. The seconds
        Ray added go to `job.seconds` (`ray_seconds`)."""
        import ray

        began = time.monotonic()
        request = {k: str(Path(v).resolve()) if k in PATH_KEYS else v for k, v in job.request.items()}
        archive = pack([p.resolve() for p in job.inputs])
        packed = time.monotonic()
        cpus, gpus = self.shape
        ref = self.task.options(num_cpus=cpus, num_gpus=gpus, max_retries=RETRIES).remote(
            archive,
            request,
            job.timeout,
            self.threads,
            [str(p.resolve()) for p in job.outputs],
        )
        self.running.add(ref)
        try:
            done = ray.get(ref)
        except ray.exceptions.RayError as error:
            reason = str(error).strip().splitlines()[0][:300] if str(error).strip() else ""
            raise NotGraded(
                bilingual(
                    f"Ray 未能评完（重试 {RETRIES} 次后）：{type(error).__name__}: {reason}",
                    f"Ray could not grade it (after {RETRIES} retries): {type(error).__name__}: {reason}",
                )
            ) from None
        finally:
            self.running.discard(ref)
        returned = time.monotonic()
        place(done["outputs"], tuple(p.resolve() for p in job.outputs))
        with job.log.open("a", encoding="utf-8") as log:
            log.write(f"==== Ray node {done['node']}\n{done['log']}")
        job.seconds = ray_seconds(
            packed - began, returned - packed, done["seconds"], time.monotonic() - returned
        )
        return done["results"], done["timed_out"], done["node"]

    def stop(self) -> None:
        """Cancel the tasks still running (the head was interrupted)."""
        import ray

        for ref in list(self.running):
            ray.cancel(ref, force=True)


def ray_seconds(packing: float, waited: float, task: dict[str, float], placing: float) -> dict[str, float]:
    """What Ray added to a job, in seconds: packing its files on the head, "queued" (from submitting the task to
    its start on a node, and its result's way back: scheduling, a worker process started, the transfers),
    unpacking and packing back on the node, placing what came back on the head."""
    added = {
        "pack": packing,
        "queued": waited - task["task"],
        "unpack": task["unpack"],
        "pack back": task["pack back"],
        "place": placing,
    }
    return {f"ray/{name}": round(max(0.0, value), 2) for name, value in added.items()}


def open_pool(address: str | None) -> LocalPool | RayPool:
    """The pool a run grades with: a Ray cluster's (`--ray [ADDRESS]`, "auto": the cluster this machine is in),
    else this machine's."""
    return RayPool(address) if address else LocalPool()
