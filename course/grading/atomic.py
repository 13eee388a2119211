"""Files replaced whole: written beside the old one, then renamed over it, so that neither a reader nor a crash
ever sees half a file."""

from __future__ import annotations

import csv
from pathlib import Path


def replace_text(path: Path, text: str) -> None:
    partial = path.with_suffix(".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


def replace_csv(path: Path, columns: list[str], lines: list[dict]) -> None:
    """A CSV of `columns` (its header) holding `lines`."""
    partial = path.with_suffix(".partial")
    with partial.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, columns)
        writer.writeheader()
        writer.writerows(lines)
    partial.replace(path)
