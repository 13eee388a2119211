"""What the judge runs inside its sandboxed child for a slow-memory exercise: the student's function on the
judge's slow memory, which stays in the judge's process.

`mem` here is a `JudgedMemory`: it knows the names, shapes and dtypes, and turns each `mem[name][index]` read
or write into a request to the judge (`course.judge.services.SlowMemoryService`), which holds the tensors and
counts every element moved with the notebooks' own counter. Nothing in this process holds the data or the
counts, so no code here can read slow memory without being counted or rewrite what was counted; whatever
else `mem` offers in a notebook (`tensor`, `read_map`, `reset_counts`, ...) is refused with a clear message.
"""

from __future__ import annotations

import operator
import sys

import torch

from utils.judged import tensor_files
from utils.judged.link import Link
from utils.judged.run import resolve
from utils.judged.student_module import MODULE_NAME
from utils.messages import bilingual
from utils.traffic.slow_memory import NamedTensors

JUDGED_ONLY = bilingual(
    "评审时慢速内存在评审程序的进程里计数：只能用 mem[name][...] 读写，以及 shape、dtype、names、add、alloc，"
    "没有 {what}",
    "when judged, slow memory is counted in the judge's process: read and write it through mem[name][...] "
    "(and shape, dtype, names, add, alloc); there is no {what}",
)


class JudgedTensor:
    """One named tensor of the judge's slow memory: its shape and dtype here, its data there."""

    def __init__(self, link: Link, name: str, shape, dtype: str):
        self._link, self.name = link, name
        self.shape, self.dtype = torch.Size(shape), tensor_files.DTYPES[dtype]
        self.device, self.ndim = torch.device("cpu"), len(self.shape)

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[dim]

    def numel(self) -> int:
        return self.shape.numel()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def __getitem__(self, index) -> torch.Tensor:
        tensors = {}
        request = {"op": "read", "name": self.name, "index": encode_index(index, tensors)}
        return self._link.request(request, tensors)[1]["tile"]

    def __setitem__(self, index, value) -> None:
        tensors = {}
        request = {"op": "write", "name": self.name, "index": encode_index(index, tensors)}
        if isinstance(value, torch.Tensor):
            tensors["value"] = value
        else:
            request["number"] = value
        self._link.request(request, tensors)

    def __getattr__(self, what: str):
        raise AttributeError(JUDGED_ONLY.format(what=what))

    def __repr__(self) -> str:
        return f"JudgedTensor({self.name!r}, shape={tuple(self.shape)}, dtype={self.dtype})"


class JudgedMemory(NamedTensors):
    """The judge's slow memory as the child sees it (the notebooks' `SlowMemory`, minus its counters)."""

    def __init__(self, link: Link):
        self._link, self._tensors = link, {}
        for name, spec in link.request({"op": "layout"})[0]["tensors"].items():
            self._tensors[name] = JudgedTensor(link, name, spec["shape"], spec["dtype"])

    def add(self, name: str, tensor: torch.Tensor) -> JudgedTensor:
        return self._placed(name, self._link.request({"op": "add", "name": name}, {"value": tensor})[0])

    def alloc(self, name: str, shape, dtype: torch.dtype = torch.float32) -> JudgedTensor:
        request = {
            "op": "alloc",
            "name": name,
            "shape": list(shape),
            "dtype": str(dtype).removeprefix("torch."),
        }
        return self._placed(name, self._link.request(request)[0])

    def _placed(self, name: str, spec: dict) -> JudgedTensor:
        self._tensors[name] = JudgedTensor(self._link, name, spec["shape"], spec["dtype"])
        return self._tensors[name]

    def __getattr__(self, what: str):
        raise AttributeError(JUDGED_ONLY.format(what=what))


def encode_index(index, tensors: dict[str, torch.Tensor]):
    """A tensor index (ints, slices, None, Ellipsis, bools, tensors, lists and arrays, tuples of them) as JSON; its
    tensors go into `tensors`."""
    if isinstance(index, tuple):
        return {"tuple": [encode_index(part, tensors) for part in index]}
    if index is None or index is Ellipsis or isinstance(index, bool):
        return (
            {"none": None} if index is None else {"ellipsis": None} if index is Ellipsis else {"bool": index}
        )
    if isinstance(index, slice):
        return {
            "slice": [None if b is None else operator.index(b) for b in (index.start, index.stop, index.step)]
        }
    if isinstance(index, list | torch.Tensor) or hasattr(index, "__array__"):  # NumPy arrays too
        key = f"i{len(tensors)}"
        tensors[key] = torch.as_tensor(index)
        return {"tensor": key}
    try:
        return {"int": operator.index(index)}
    except TypeError:
        raise TypeError(
            bilingual(
                f"不支持的索引类型 {type(index).__name__}", f"unsupported index type {type(index).__name__}"
            )
        ) from None


def decode_index(node, tensors: dict[str, torch.Tensor]):
    """The index `encode_index` described (the judge's side: plain values only, anything else a TypeError)."""
    kind, value = next(iter(node.items())) if isinstance(node, dict) and len(node) == 1 else (None, None)
    if kind == "tuple" and isinstance(value, list):
        return tuple(decode_index(part, tensors) for part in value)
    if kind in ("none", "ellipsis"):
        return None if kind == "none" else Ellipsis
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "int" and type(value) is int:
        return value
    if kind == "slice" and isinstance(value, list) and len(value) == 3:
        if all(b is None or type(b) is int for b in value):
            return slice(*value)
    if kind == "tensor" and isinstance(value, str) and value in tensors:
        return tensors[value]
    raise TypeError(bilingual("无法读取的索引", "an unreadable index"))


def run(target: str, address: str, *args) -> None:
    """Call `target(mem, *args)`, `mem` the judge's slow memory served at `address` (a Unix socket)."""
    with Link(address) as link:
        resolve(sys.modules[MODULE_NAME], target)(JudgedMemory(link), *args)


def plain(value):
    """A JSON value as the student's function expects it: lists become tuples, "torch.float16" a dtype."""
    if isinstance(value, list):
        return tuple(plain(v) for v in value)
    if (
        isinstance(value, str)
        and value.startswith("torch.")
        and isinstance(getattr(torch, value[6:], None), torch.dtype)
    ):
        return getattr(torch, value[6:])
    return value


def call(target: str, *args):
    """Call `target(*args)` with the arguments the judge could only send as JSON turned back (`plain`)."""
    return resolve(sys.modules[MODULE_NAME], target)(*(plain(a) for a in args))


__all__ = ["JudgedMemory", "JudgedTensor", "call", "decode_index", "encode_index", "plain", "run"]
