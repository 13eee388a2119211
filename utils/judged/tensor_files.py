"""Tensors as plain data: one raw byte file plus a JSON header (shape, dtype, offset) — no pickle, no code.

The judge and the sandboxed child that runs a student's code exchange tensors this way, so reading what
the child wrote can never execute anything (unlike `torch.load`).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

DTYPES = {
    str(dtype).removeprefix("torch."): dtype
    for dtype in (
        torch.float64,
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.int64,
        torch.int32,
        torch.int16,
        torch.int8,
        torch.uint8,
        torch.bool,
    )
}


def _pieces(tensors: dict[str, torch.Tensor]):
    """(name, header entry, raw bytes) of each tensor, in order."""
    offset = 0
    for name, tensor in tensors.items():
        flat = tensor.detach().to("cpu").contiguous().reshape(-1)
        raw = flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
        dtype = str(flat.dtype).removeprefix("torch.")
        yield name, {"dtype": dtype, "shape": list(tensor.shape), "offset": offset, "bytes": len(raw)}, raw
        offset += len(raw)


def pack(tensors: dict[str, torch.Tensor]) -> tuple[bytes, bytes]:
    """(header, raw bytes) of `tensors`, as `parse` reads them (a message rather than two files)."""
    entries = list(_pieces(tensors))
    header = {name: entry for name, entry, _ in entries}
    return json.dumps(header).encode(), b"".join(raw for _, _, raw in entries)


def save(tensors: dict[str, torch.Tensor], path: Path) -> None:
    """Write `tensors` to `path` (raw bytes) and `path` + ".json" (the header)."""
    header = {}
    with open(path, "wb") as data:
        for name, entry, raw in _pieces(tensors):
            header[name] = entry
            data.write(raw)
    Path(f"{path}.json").write_text(json.dumps(header), encoding="utf-8")


def load(path: Path) -> dict[str, torch.Tensor]:
    """Read what `save` wrote; a malformed file raises ValueError (never executes anything)."""
    return parse(Path(f"{path}.json").read_bytes(), Path(path).read_bytes())


def parse(header_bytes: bytes, raw: bytes) -> dict[str, torch.Tensor]:
    """The tensors of a header and its raw bytes; anything malformed raises ValueError."""
    try:
        header = json.loads(header_bytes)
        return {str(name): _tensor(entry, raw) for name, entry in header.items()}
    except (AttributeError, KeyError, TypeError, ValueError, OverflowError, RecursionError) as error:
        raise ValueError(f"malformed tensor file: {type(error).__name__}") from None


def _tensor(entry: dict, raw: bytes) -> torch.Tensor:
    dtype = DTYPES.get(entry.get("dtype"))
    shape = [int(n) for n in entry.get("shape", [])]
    start, size = int(entry.get("offset", -1)), int(entry.get("bytes", -1))
    numel = 1
    for n in shape:
        numel *= n
    item = torch.empty((), dtype=dtype).element_size() if dtype is not None else 0
    if (
        dtype is None
        or min(shape, default=0) < 0
        or size != numel * item
        or not 0 <= start <= len(raw) - size
    ):
        raise ValueError("malformed tensor entry")
    if not size:
        return torch.empty(shape, dtype=dtype)
    return (
        torch.frombuffer(bytearray(raw[start : start + size]), dtype=torch.uint8).view(dtype).reshape(shape)
    )


__all__ = ["load", "pack", "parse", "save"]
