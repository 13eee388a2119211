r"""Bilingual parity of markdown cells: the Chinese and the English half carry the same formulas and code.

The layout rule (course/AUTHORING.md, "Bilingual layout"): in every markdown cell the Chinese text comes
first, then the English, in the same cell. `halves` splits a cell by that rule, line by line:

- a heading `## 中文标题 · English title` splits at its first " · ";
- a line with Chinese in it, whose English follows after " / " (a list item, a note, a **交付** line), splits
  at the first " / " after its last Chinese character;
- any other line with Chinese in it is Chinese, a line without Chinese is English;
- shared lines belong to neither half: fenced code blocks, tables and display formulas (`$$ … $$`).

Chinese characters, " / " and " · " inside formulas and code spans do not count. `cell_problems` then
compares the multisets of inline formulas (`$…$`) and code spans (`` `…` ``) of the two halves. One
exception: words in a formula's `\text{…}` are prose, translated like the rest (`$\text{内存} \propto N^k$`
matches `$\text{memory} \propto N^k$`).
"""

from __future__ import annotations

import re
from collections import Counter

CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
SPAN = re.compile(r"(`+)(.+?)\1|(?<!\$)\$(?!\$)(.+?)(?<!\$)\$(?!\$)")
LIST_OR_QUOTE = re.compile(r"^\s*(?:>\s*)*(?:[-*+]\s+|\d+[.)]\s+)?")
TEXT_IN_FORMULA = re.compile(r"\\(?:text|textrm|mbox)\{[^{}]*\}")


def _masked(line: str) -> str:
    """`line` with every formula and code span replaced by underscores (same length)."""
    return SPAN.sub(lambda m: "_" * len(m.group(0)), line)


def _split_line(line: str) -> tuple[str, str]:
    """(Chinese part, English part) of one line of prose."""
    masked = _masked(line)
    if line.lstrip().startswith("#"):
        cut = masked.find(" · ")
        if cut >= 0:
            return line[:cut], line[cut + 3 :]
        return (line, "") if CJK.search(masked) else ("", line)
    chinese = [m.end() for m in CJK.finditer(masked)]
    if not chinese:
        return "", line
    cut = masked.find(" / ", chinese[-1])
    if cut >= 0:
        return line[:cut], line[cut + 3 :]
    return line, ""


def halves(markdown: str) -> tuple[str, str]:
    """The Chinese and the English half of a markdown cell (shared lines in neither)."""
    chinese, english = [], []
    fenced = display = False
    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        if display or stripped.startswith("$$"):
            closes = stripped.count("$$") % 2 == 1
            display = display != closes
            continue
        if not stripped or stripped.startswith("|"):
            continue
        zh, en = _split_line(LIST_OR_QUOTE.sub("", line, count=1))
        chinese += [zh] if zh.strip() else []
        english += [en] if en.strip() else []
    return "\n".join(chinese), "\n".join(english)


def spans(text: str) -> Counter:
    r"""The inline formulas and code spans of `text`, counted (a formula's `\text{…}` words left out)."""
    found = [m.group(0).strip() for m in SPAN.finditer(text)]
    return Counter(TEXT_IN_FORMULA.sub(r"\\text{…}", s) if s.startswith("$") else s for s in found)


def cell_problems(markdown: str) -> list[str]:
    """What one half has that the other lacks (empty when the formulas and code spans match)."""
    zh, en = (spans(half) for half in halves(markdown))
    problems = []
    if zh - en:
        problems.append(f"only in Chinese: {sorted((zh - en).elements())}")
    if en - zh:
        problems.append(f"only in English: {sorted((en - zh).elements())}")
    return problems


def notebook_problems(nb) -> list[str]:
    """Every markdown cell of `nb` whose halves differ, as 'cell N: …' lines."""
    return [
        f"cell {index}: {problem}"
        for index, cell in enumerate(nb.cells)
        if cell.cell_type == "markdown"
        for problem in cell_problems(cell.source)
    ]


__all__ = ["cell_problems", "halves", "notebook_problems", "spans"]
