"""Count the global-memory traffic of a Triton kernel: run it in Triton's interpreter and record every
load and store, in bytes per tensor argument and per program.

    traffic = count_traffic(copy_kernel, (triton.cdiv(n, 256),), x, y, n, BLOCK=256)
    traffic.read_bytes("x"), traffic.written_bytes("y"), traffic.total_bytes(), print(traffic.table())

What is counted: the lanes a `tl.load`/`tl.store` actually performs (masked-off lanes are not memory
traffic and are not counted), attributed to the tensor argument whose memory they fall in; an atomic
read-modify-write counts one read and one write per active lane. These are *requested* bytes, what the
kernel asks of global memory: on a real GPU the L2 cache serves some repeated requests without reaching
HBM, so the HBM traffic a profiler measures can be lower (never higher, apart from whole-sector rounding).

How: the interpreter runs each program in NumPy through one builder object; while counting, its masked
load/store entry points (`create_masked_load`, `create_masked_store`, which every plain, masked, atomic
and descriptor access goes through) are wrapped. Works with or without a GPU: on a GPU machine, where
Triton was imported in compile mode, the count runs in a child process in interpreter mode on CPU copies
of the arguments (numbers, strings, None and tensors of the dtypes `utils.judged.tensor_files` knows), and what
the kernel wrote is copied back into the caller's tensors. Autotuning is bypassed: pass every
`tl.constexpr` (block sizes) yourself. Checked with Triton 3.6 and 3.9; a Triton whose interpreter changed these entry points gets a clear error, never a
silent wrong count.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
import types
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from utils import runtime
from utils.checks.isolation import _tail, export_module, load_student_module
from utils.judged import tensor_files
from utils.messages import bilingual
from utils.traffic.slow_memory import traffic_table

# The parameters (after self) the hook reads, by entry point; other parameters are passed through untouched.
# Loads and stores are required; atomics are counted where the entry point has the expected form.
EXPECTED = {
    "create_masked_load": ("ptrs", "mask"),
    "create_masked_store": ("ptrs", "value", "mask"),
}
ATOMIC_RMW = ("rmwOp", "ptr", "val", "mask")


class CounterUnsupported(RuntimeError):
    """The installed Triton's interpreter does not have the entry points the counter wraps."""


@dataclass
class Region:
    """The memory of one tensor argument: [start, end) in bytes of the (host) address space."""

    name: str
    start: int
    end: int
    element_size: int
    contiguous: bool
    shape: tuple[int, ...]


@dataclass
class Traffic:
    """What one kernel launch read and wrote, per tensor argument and per program."""

    kernel: str
    regions: list[Region]
    bytes: dict[str, list[int]] = field(default_factory=dict)  # name -> [read, written]
    programs: dict[tuple[int, int, int], dict[str, list[int]]] = field(default_factory=dict)
    maps: dict[str, list[np.ndarray]] = field(default_factory=dict)  # name -> [reads, writes] per element
    outside: list[int] = field(default_factory=lambda: [0, 0])  # bytes in no tensor argument

    def read_bytes(self, name: str | None = None) -> int:
        return self._sum(0, name)

    def written_bytes(self, name: str | None = None) -> int:
        return self._sum(1, name)

    def total_bytes(self, name: str | None = None) -> int:
        return self.read_bytes(name) + self.written_bytes(name)

    def _sum(self, which: int, name: str | None) -> int:
        if name is None:
            return sum(v[which] for v in self.bytes.values()) + self.outside[which]
        if name not in self.bytes:
            raise KeyError(
                bilingual(
                    f"{self.kernel} 没有张量参数 {name!r}（有 {list(self.bytes)}）",
                    f"{self.kernel} has no tensor argument {name!r} (it has {list(self.bytes)})",
                )
            )
        return self.bytes[name][which]

    def read_map(self, name: str) -> np.ndarray:
        """How many times each element of tensor `name` was read (its shape if contiguous, else flat)."""
        return self._map(name, 0)

    def write_map(self, name: str) -> np.ndarray:
        return self._map(name, 1)

    def _map(self, name: str, which: int) -> np.ndarray:
        region = next(r for r in self.regions if r.name == name)
        counts = self.maps[name][which]
        return counts.reshape(region.shape) if region.contiguous else counts

    def program_bytes(self, name: str | None = None) -> dict[tuple[int, int, int], int]:
        """Bytes (read + written) of each program, for one tensor or for all."""
        return {
            pid: sum(rw[0] + rw[1] for n, rw in per.items() if name is None or n == name)
            for pid, per in sorted(self.programs.items())
        }

    def table(self) -> str:
        rows = {name: (rw[0], rw[1]) for name, rw in self.bytes.items()}
        if any(self.outside):
            rows[bilingual("张量之外", "outside every tensor")] = tuple(self.outside)
        return traffic_table(
            rows,
            bilingual(f"{self.kernel} 请求的全局内存流量", f"{self.kernel}: requested global-memory traffic"),
        )

    def __add__(self, other: Traffic) -> Traffic:
        """The traffic of two launches together (e.g. the three kernels of unfused attention)."""
        total = Traffic(f"{self.kernel} + {other.kernel}", self.regions + other.regions)
        for part in (self, other):
            for name, (read, written) in part.bytes.items():
                rw = total.bytes.setdefault(name, [0, 0])
                rw[0], rw[1] = rw[0] + read, rw[1] + written
            total.outside = [a + b for a, b in zip(total.outside, part.outside, strict=True)]
        return total


def _python_function(kernel) -> types.FunctionType:
    """The plain function behind a @triton.jit kernel (also through autotune/heuristics wrappers)."""
    obj = kernel
    for _ in range(8):
        if isinstance(obj, types.FunctionType):
            return obj
        obj = getattr(obj, "fn", None)
    raise TypeError(
        bilingual(
            f"{kernel!r} 不是 @triton.jit 内核",
            f"{kernel!r} is not a @triton.jit kernel",
        )
    )


def _interpreter():
    """Triton's interpreter module, after checking that the entry points the hook wraps are there."""
    import triton
    from triton.runtime import interpreter

    builder = getattr(interpreter, "interpreter_builder", None)
    for method, wanted in EXPECTED.items():
        names = _parameters(builder, method, len(wanted))
        if names != wanted:
            raise CounterUnsupported(
                bilingual(
                    f"Triton {triton.__version__} 的解释器改变了 {method} 的接口（期望参数 {wanted}，得到 {names}），"
                    "流量计数器无法可靠计数；请使用 Triton 3.6–3.9，或更新 utils/traffic/triton_counter.py",
                    f"Triton {triton.__version__}'s interpreter changed {method} (expected parameters {wanted}, "
                    f"found {names}): the traffic counter cannot count reliably. Use Triton 3.6–3.9 or update "
                    "utils/traffic/triton_counter.py",
                )
            )
    _index_scalars_of_any_rank(interpreter)
    return interpreter


def _index_scalars_of_any_rank(interpreter) -> None:
    """Triton 3.6's interpreter turns a scalar tensor into a Python int with `int(array)` (in `range(0, n, B)`,
    say), which NumPy >= 2.4 refuses for the one-element arrays it holds: make `__index__` take `.item()`."""
    patch = getattr(interpreter, "_patch_lang_tensor", None)
    if patch is None or getattr(patch, "indexes_any_rank", False):
        return

    def patch_lang_tensor(tensor, scope):
        patch(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.item()))

    patch_lang_tensor.indexes_any_rank = True
    interpreter._patch_lang_tensor = patch_lang_tensor


def _parameters(builder, method: str, count: int) -> tuple[str, ...]:
    """The first `count` parameter names (after self) of the builder's entry point `method`, or ()."""
    found = getattr(type(builder), method, None)
    return tuple(inspect.signature(found).parameters)[1 : 1 + count] if found else ()


class _Recorder:
    """Attributes the active lanes of each access to a tensor argument and the current program."""

    def __init__(self, builder, regions: list[Region], traffic: Traffic):
        self.builder, self.regions, self.traffic = builder, regions, traffic
        for r in regions:
            traffic.bytes[r.name] = [0, 0]
            extent = (r.end - r.start) // r.element_size
            traffic.maps[r.name] = [np.zeros(extent, np.int64), np.zeros(extent, np.int64)]

    def record(self, which: int, ptrs, mask) -> None:
        addresses = np.asarray(ptrs.data).astype(np.uint64).reshape(-1)
        if mask is not None:
            active = np.broadcast_to(np.asarray(mask.data, dtype=bool), np.shape(ptrs.data)).reshape(-1)
            addresses = addresses[active]
        program = self.traffic.programs.setdefault(tuple(self.builder.grid_idx), defaultdict(lambda: [0, 0]))
        unassigned = np.ones(addresses.shape, dtype=bool)
        for r in self.regions:
            hit = unassigned & (addresses >= r.start) & (addresses < r.end)
            count = int(hit.sum())
            if count:
                unassigned &= ~hit
                self.traffic.bytes[r.name][which] += count * r.element_size
                program[r.name][which] += count * r.element_size
                offsets = ((addresses[hit] - np.uint64(r.start)) // np.uint64(r.element_size)).astype(
                    np.int64
                )
                np.add.at(self.traffic.maps[r.name][which], offsets, 1)
        left = int(unassigned.sum())
        if left:
            self.traffic.outside[which] += left * _pointer_element_size(ptrs)


def _pointer_element_size(ptrs) -> int:
    element = ptrs.get_element_ty() if hasattr(ptrs, "get_element_ty") else ptrs.dtype.element_ty
    return max(1, element.primitive_bitwidth // 8)


@contextlib.contextmanager
def _hooked(interpreter, recorder: _Recorder) -> Iterator[None]:
    """Wrap the builder's memory entry points (on the instance) for the duration of one launch."""
    builder = interpreter.interpreter_builder
    load, store, rmw = builder.create_masked_load, builder.create_masked_store, builder.create_atomic_rmw

    def counted_load(ptrs, mask, *rest, **options):
        recorder.record(0, ptrs, mask)
        return load(ptrs, mask, *rest, **options)

    def counted_store(ptrs, value, mask, *rest, **options):
        recorder.record(1, ptrs, mask)
        return store(ptrs, value, mask, *rest, **options)

    def counted_rmw(op, ptr, val, mask, *rest, **options):
        recorder.record(0, ptr, mask)
        recorder.record(1, ptr, mask)
        return rmw(op, ptr, val, mask, *rest, **options)

    def uncounted(what: str):
        def refuse(*args, **options):
            raise CounterUnsupported(
                bilingual(
                    f"流量计数器在这个 Triton 版本上不能计数 {what}",
                    f"the traffic counter cannot count {what} with this Triton version",
                )
            )

        return refuse

    counts_atomics = _parameters(builder, "create_atomic_rmw", len(ATOMIC_RMW)) == ATOMIC_RMW
    hooks = {
        "create_masked_load": counted_load,
        "create_masked_store": counted_store,
        "create_atomic_rmw": counted_rmw if counts_atomics else uncounted("tl.atomic_*"),
        "create_atomic_cas": uncounted("tl.atomic_cas"),
    }
    for name, hook in hooks.items():
        setattr(builder, name, hook)
    try:
        yield
    finally:
        for name in hooks:
            builder.__dict__.pop(name, None)


def _host_copies(arguments: dict) -> tuple[dict, list[tuple[torch.Tensor, torch.Tensor]]]:
    """Arguments with every non-CPU tensor replaced by a CPU tensor over a CPU copy of its storage (views
    of one storage share one copy), and the (device, host) pairs to copy back after the launch."""
    storages, back, host = {}, [], {}
    for name, value in arguments.items():
        if isinstance(value, torch.Tensor) and value.device.type != "cpu":
            key = value.untyped_storage().data_ptr()
            if key not in storages:
                storages[key] = value.untyped_storage().cpu()
            copy = value.new_empty(0, device="cpu").set_(
                storages[key], value.storage_offset(), value.size(), value.stride()
            )
            back.append((value, copy))
            host[name] = copy
        else:
            host[name] = value
    return host, back


def _region(name: str, t: torch.Tensor) -> Region:
    if any(s < 0 for s in t.stride()):
        raise ValueError(bilingual(f"{name} 有负步长", f"{name} has a negative stride"))
    span = (
        1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride(), strict=True))
        if t.numel()
        else 0
    )
    size = t.element_size()
    return Region(name, t.data_ptr(), t.data_ptr() + span * size, size, t.is_contiguous(), tuple(t.shape))


def count_traffic(kernel, grid, *args, **kwargs) -> Traffic:
    """Run `kernel[grid](*args, **kwargs)` in Triton's interpreter and return the bytes it read and wrote.

    Tensors may live on the CPU or a GPU (outputs are copied back either way). Pass every `tl.constexpr`.
    A callable grid is called with the arguments by name. On a GPU machine the count runs in a child
    process in interpreter mode (see `_count_in_child`).
    """
    fn = _python_function(kernel)
    arguments = dict(inspect.signature(fn).bind(*args, **kwargs).arguments)
    grid = tuple(grid(arguments) if callable(grid) else grid)
    if not runtime.interpreter():
        return _count_in_child(fn, grid, arguments)
    return _count_here(fn, grid, arguments)


def _count_here(fn: types.FunctionType, grid: tuple, arguments: dict) -> Traffic:
    """Count in this process, whose Triton runs in interpreter mode."""
    interpreter = _interpreter()
    host, back = _host_copies(arguments)
    regions = [_region(n, v) for n, v in host.items() if isinstance(v, torch.Tensor)]
    traffic = Traffic(fn.__name__, regions)
    recorder = _Recorder(interpreter.interpreter_builder, regions, traffic)
    with _hooked(interpreter, recorder):
        interpreter.InterpretedFunction(fn).run(grid=grid, warmup=False, **host)
    for device_tensor, host_tensor in back:
        device_tensor.copy_(host_tensor)
    return traffic


# A GPU machine imported Triton in compile mode: every @triton.jit function there (the kernel, its helpers and
# Triton's own library functions such as tl.sum) is compiled for the GPU and cannot be interpreted in this
# process. The count then runs in a child process that imports Triton in interpreter mode. What crosses
# over is plain data: the kernel's location (module and name, or the exported source of a notebook-defined
# kernel), the grid, JSON values, and the tensors' storages as raw bytes (`utils.judged.tensor_files`, no pickle).
_CHILD = "import sys; from utils.traffic.triton_counter import _child; _child(sys.argv[1])"


def _count_in_child(fn: types.FunctionType, grid: tuple, arguments: dict) -> Traffic:
    """Count in a child process with TRITON_INTERPRET=1 and copy what the kernel wrote back."""
    with tempfile.TemporaryDirectory(prefix="count_traffic_") as name:
        folder = Path(name)
        storages, layouts, values = _pack(fn, arguments)
        tensor_files.save(storages, folder / "storages")
        request = {
            "kernel": _kernel_location(fn, folder),
            "grid": list(grid),
            "tensors": layouts,
            "values": values,
            "path": sys.path,
        }
        (folder / "request.json").write_text(json.dumps(request), encoding="utf-8")
        child = subprocess.run(
            [sys.executable, "-c", _CHILD, str(folder)],
            capture_output=True,
            text=True,
            env=_child_environment(),
        )
        print(child.stdout, end="")  # the kernel's tl.device_print, if any
        result = _read_json(folder / "result.json")
        if child.returncode != 0 or result is None:
            raise RuntimeError(
                bilingual(
                    f"在解释器子进程中计数 {fn.__name__} 失败（退出码 {child.returncode}）",
                    f"counting {fn.__name__} in the interpreter child process failed (exit {child.returncode})",
                )
                + "\n"
                + _tail(child.stderr)
            )
        if not result["ok"]:
            raise (CounterUnsupported if result["unsupported"] else RuntimeError)(result["error"])
        written = tensor_files.load(folder / "written")
        with torch.no_grad():
            for name, view in _views(written, layouts).items():
                arguments[name].copy_(view)
        return _traffic_from(result["traffic"], tensor_files.load(folder / "maps"))


def _pack(fn: types.FunctionType, arguments: dict) -> tuple[dict, dict, dict]:
    """The storages of the tensor arguments (raw bytes, one per storage: views stay views of one another),
    each tensor's layout in its storage, and the other arguments (JSON values)."""
    storages, keys, layouts, values = {}, {}, {}, {}
    for name, value in arguments.items():
        if isinstance(value, torch.Tensor):
            storage = value.untyped_storage()
            key = keys.setdefault((value.device, storage.data_ptr()), f"storage{len(keys)}")
            storages[key] = value.new_empty(0, dtype=torch.uint8).set_(storage)
            dtype = str(value.dtype).removeprefix("torch.")
            if dtype not in tensor_files.DTYPES:
                raise TypeError(
                    bilingual(
                        f"流量计数器不支持张量 {name} 的类型 {dtype}",
                        f"the traffic counter does not support {name}'s dtype {dtype}",
                    )
                )
            layouts[name] = {
                "storage": key,
                "dtype": dtype,
                "offset": value.storage_offset(),
                "size": list(value.shape),
                "stride": list(value.stride()),
            }
        elif value is None or isinstance(value, bool | int | float | str):
            values[name] = value
        else:
            raise TypeError(
                bilingual(
                    f"{fn.__name__} 的参数 {name}={value!r} 无法传给解释器子进程（只支持张量、数字、字符串和 None）",
                    f"{fn.__name__}'s argument {name}={value!r} cannot be sent to the interpreter child process "
                    "(tensors, numbers, strings and None only)",
                )
            )
    return storages, layouts, values


def _views(storages: dict[str, torch.Tensor], layouts: dict) -> dict[str, torch.Tensor]:
    """The tensors of `layouts` as views of `storages` (those present)."""
    return {
        name: torch.empty(0, dtype=tensor_files.DTYPES[layout["dtype"]]).set_(
            storages[layout["storage"]].untyped_storage(), layout["offset"], layout["size"], layout["stride"]
        )
        for name, layout in layouts.items()
        if layout["storage"] in storages
    }


def _kernel_location(fn: types.FunctionType, folder: Path) -> dict:
    """Where the child finds the kernel: its module and qualified name if a fresh process can import them,
    else a module file exported from its source (a kernel defined in a notebook)."""
    module = sys.modules.get(fn.__module__)
    if fn.__module__ != "__main__" and module is not None and getattr(module, "__file__", None):
        obj = module
        for part in fn.__qualname__.split("."):
            obj = getattr(obj, part, None)
        if obj is not None and _python_function(obj) is fn:
            return {"module": fn.__module__, "qualname": fn.__qualname__}
    path = export_module([fn], folder / "kernel_module.py", fn.__globals__)
    return {"file": str(path), "qualname": fn.__name__}


def _child_environment() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env.update({"TRITON_INTERPRET": "1", runtime.ENV_VAR: "cpu", runtime.BANNER_SHOWN: "1"})
    env["CUDA_VISIBLE_DEVICES"] = ""  # the child never touches the GPU
    return env


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _traffic_json(traffic: Traffic) -> dict:
    return {
        "kernel": traffic.kernel,
        "regions": [dataclasses.asdict(r) for r in traffic.regions],
        "bytes": traffic.bytes,
        "programs": [[list(pid), dict(per)] for pid, per in traffic.programs.items()],
        "outside": traffic.outside,
    }


def _traffic_from(data: dict, maps: dict[str, torch.Tensor]) -> Traffic:
    regions = [Region(**{**r, "shape": tuple(r["shape"])}) for r in data["regions"]]
    traffic = Traffic(data["kernel"], regions, data["bytes"], outside=data["outside"])
    traffic.programs = {tuple(pid): per for pid, per in data["programs"]}
    traffic.maps = {r.name: [maps[f"{which}:{r.name}"].numpy() for which in (0, 1)] for r in regions}
    return traffic


def _load_kernel(location: dict):
    if "file" in location:
        obj = load_student_module(location["file"])
    else:
        obj = importlib.import_module(location["module"])
    for part in location["qualname"].split("."):
        obj = getattr(obj, part)
    return obj


def _child(folder: str) -> None:
    """Entry point of the child process (interpreter mode): count, write what changed and the result."""
    folder = Path(folder)
    request = json.loads((folder / "request.json").read_text(encoding="utf-8"))
    sys.path[:0] = [p for p in request["path"] if p not in sys.path]
    try:
        fn = _python_function(_load_kernel(request["kernel"]))
        storages = tensor_files.load(folder / "storages")
        before = {key: storage.clone() for key, storage in storages.items()}
        tensors = _views(storages, request["tensors"])
        traffic = _count_here(fn, tuple(request["grid"]), {**request["values"], **tensors})
        changed = {k: s for k, s in storages.items() if not torch.equal(s, before[k])}
        tensor_files.save(changed, folder / "written")
        maps = {f"{w}:{name}": torch.from_numpy(m[w]) for name, m in traffic.maps.items() for w in (0, 1)}
        tensor_files.save(maps, folder / "maps")
        result = {"ok": True, "traffic": _traffic_json(traffic)}
    except Exception as error:  # reported to the parent, which raises it there
        unsupported = isinstance(error, CounterUnsupported) or "CounterUnsupported" in repr(error)
        result = {"ok": False, "unsupported": unsupported, "error": f"{type(error).__name__}: {error}"}
    (folder / "result.json").write_text(json.dumps(result), encoding="utf-8")


__all__ = ["CounterUnsupported", "Traffic", "count_traffic"]
