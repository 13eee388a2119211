"""Student outputs made inert and bounded before they are stored in autograded/ and shown as feedback.

Whatever a student's code displays reaches autograded/ and, through nbgrader's feedback HTML (nbconvert, its
sanitiser off), the browser of whoever opens it. `sanitize` (nbgrader's step `course.judge.sanitize`, after
the notebook ran and before the judge writes its reports) goes through every output of every cell and:

- keeps only inert MIME types (`INERT`: plain text, PNG, JPEG), never HTML, JavaScript, SVG, markdown, LaTeX or
  widget state; an output left with nothing to show says what was removed;
- keeps at most MAX_OUTPUT bytes per output, MAX_CELL per cell and MAX_NOTEBOOK per notebook (the largest
  output of the course's own notebooks, a plot, is ~0.2 MB, their largest notebook ~0.2 MB in all); what is
  cut is replaced by a short bilingual note saying how much.

An output keeps its kind, so nbgrader scores the cell as before: an error stays an error, stderr stays stderr,
and the first of each (and the first result) survives even past the budget. Notebook metadata that renders as
a script (widget state) is dropped.
"""

from __future__ import annotations

import math

from nbformat import NotebookNode
from nbformat.v4 import new_output

from utils.messages import bilingual

MIB = 1 << 20
MAX_OUTPUT = 1 * MIB
MAX_CELL = 4 * MIB
MAX_NOTEBOOK = 8 * MIB
INERT = ("text/plain", "image/png", "image/jpeg")
KEPT_PAST_BUDGET = 1024  # bytes of an error, stderr or result kept once a cell's budget is spent
SCRIPTED_METADATA = ("widgets",)  # notebook metadata the feedback template writes into a <script>


def cut_note(cut: int) -> str:
    return bilingual(f"[输出过长，已删去 {cut} 字节]", f"[output too long: {cut} bytes cut]")


def removed_note(types: list[str]) -> str:
    shown = ", ".join(types)
    return bilingual(
        f"[已移除可执行的输出（{shown}）：反馈中不显示]",
        f"[active output removed ({shown}): not shown in feedback]",
    )


def dropped_note(count: int, cut: int) -> str:
    return bilingual(
        f"[本单元格输出超出上限：另有 {count} 个输出（{cut} 字节）已删去]",
        f"[this cell's output is over its limit: {count} more output(s) ({cut} bytes) cut]",
    )


def refused_note() -> str:
    """The relay's note on a message from the kernel it refused (`course.judge.relay`: fields kind, frames, bytes)."""
    return bilingual(
        "[内核在 {kind} 通道上发来的一条消息（{frames} 帧，{bytes} 字节）超出评分程序的上限，已丢弃]",
        "[a message from the kernel on its {kind} channel ({frames} frames, {bytes} bytes) is over the grader's "
        "bounds: dropped]",
    )


def over_budget_note() -> str:
    return bilingual(
        "[内核发来的控件、显示更新等消息超出评分程序为本笔记本保留的上限，其余的已丢弃]",
        "[widget, display-update and captured-output messages from the kernel are over the grader's limit for this "
        "notebook: the rest were dropped]",
    )


def size(output) -> int:
    """Bytes of an output's text and data."""
    if output.output_type == "stream":
        return len(output.text.encode())
    if output.output_type == "error":
        return sum(len(s.encode()) for s in [output.ename, output.evalue, *output.traceback])
    return sum(len(str(value).encode()) for value in output.get("data", {}).values())


def clip(text: str, limit: int) -> str:
    """`text` cut to its first `limit` bytes (whole characters), then a note on a line of its own."""
    raw = text.encode()
    if len(raw) <= limit:
        return text
    return raw[:limit].decode(errors="ignore") + "\n" + cut_note(len(raw) - limit) + "\n"


def inert(output):
    """A display or result with only inert MIME types (text data only) and numeric image sizes as its metadata;
    other outputs as they are."""
    if output.output_type not in ("display_data", "execute_result"):
        return output
    data = output.get("data", {})
    kept = {mime: value for mime, value in data.items() if mime in INERT and isinstance(value, str)}
    if not kept:
        kept = {"text/plain": removed_note(sorted(data))}
    output.data = kept
    output.metadata = {mime: image_size(output, mime) for mime in kept if mime.startswith("image/")}
    return output


def image_size(output, mime: str) -> dict:
    """The finite numeric width and height in an image's metadata, nothing else (no file names, no URLs)."""
    metadata = output.get("metadata")
    found = metadata.get(mime) if isinstance(metadata, dict) else None
    if not isinstance(found, dict):
        return {}
    return {
        key: value
        for key, value in found.items()
        if key in ("width", "height") and isinstance(value, int | float) and math.isfinite(value)
    }


def shrink(output, limit: int):
    """The output cut to about `limit` bytes, keeping its kind (an image too large becomes a note)."""
    if output.output_type == "stream":
        output.text = clip(output.text, limit)
    elif output.output_type == "error":
        output.ename = clip(output.ename, min(limit, 200))
        output.evalue = clip(output.evalue, limit)
        kept, room = [], limit - len(output.evalue.encode())
        for line in output.traceback:
            if len(line.encode()) > room:
                kept.append(cut_note(sum(len(s.encode()) for s in output.traceback[len(kept) :])))
                break
            kept.append(line)
            room -= len(line.encode())
        output.traceback = kept
    else:
        text = output.data.get("text/plain", "")
        image_bytes = size(output) - len(text.encode())
        if image_bytes:  # an image cannot be cut: it goes, a note says so
            text += "\n" + cut_note(image_bytes)
            output.metadata = {}
        output.data = {"text/plain": clip(text, limit)}
    return output


def decisive(output) -> str | None:
    """The kind of output nbgrader's score depends on (an error or stderr scores 0, a result is partial
    credit), else None."""
    if output.output_type == "stream":
        return "stderr" if output.name == "stderr" else None
    return output.output_type if output.output_type in ("error", "execute_result") else None


def bounded(outputs: list, budget: int) -> tuple[list, int]:
    """The outputs of one cell within `budget` bytes (and MAX_OUTPUT each), and the bytes they keep. Past the
    budget only the first output of each decisive kind is kept, cut to KEPT_PAST_BUDGET bytes."""
    kept, used, dropped, dropped_bytes, kinds = [], 0, 0, 0, set()
    for output in map(inert, outputs):
        room = min(MAX_OUTPUT, budget - used)
        kind = decisive(output)
        if room <= 0 and (kind is None or kind in kinds):
            dropped, dropped_bytes = dropped + 1, dropped_bytes + size(output)
            continue
        if size(output) > room:
            output = shrink(output, max(room, KEPT_PAST_BUDGET))
        kinds.add(kind)
        kept.append(output)
        used += size(output)
    if dropped:
        note = new_output("stream", name="stdout", text=dropped_note(dropped, dropped_bytes) + "\n")
        kept.append(note)
        used += size(note)
    return kept, used


def sanitize(nb: NotebookNode) -> NotebookNode:
    """`nb` with every code cell's outputs inert and within the limits, and no scripted notebook metadata."""
    left = MAX_NOTEBOOK
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, used = bounded(cell.outputs, min(MAX_CELL, left))
            left = max(0, left - used)
    for key in SCRIPTED_METADATA:
        nb.metadata.pop(key, None)
    return nb
