"""What a student wrote, made inert wherever an instructor reads it: a console, a log, a spreadsheet.

A notebook's bytes, a file or folder name, an LMS name, a grade id or a regrade reason may hold terminal escape
sequences (ESC, CSI, OSC: they recolour, retitle or clear the instructor's terminal, or write to its clipboard),
other C0/C1 controls, line breaks that start a forged log line, bidi overrides that show text in another order,
or a leading `=` that a spreadsheet runs as a formula. `visible` writes each such character as its Python escape
(`\\x1b`, `\\n`, `\\u202e`); `cell` is `visible` for a CSV cell, with the formula guard.
"""

from __future__ import annotations

# A spreadsheet runs a cell starting with one of these as a formula (OWASP's "CSV injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def visible(text: str) -> str:
    """`text` as it can be printed on one line: every character that is not printable (controls, line breaks,
    format characters such as bidi overrides and zero-width marks, lone surrogates) written as its escape;
    printable text, Chinese included, as it is."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in text)


def cell(text: str) -> str:
    """A CSV cell a spreadsheet shows as text: `visible`, and a leading ' when it would start a formula."""
    text = visible(text)
    return f"'{text}" if text.startswith(FORMULA_START) else text
