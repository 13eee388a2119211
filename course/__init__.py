"""The course's own tooling: `python -m course check | release | grade | selftest | demo | bench`."""

import sys
from pathlib import Path

# jsonschema (under nbformat and nbgrader) imports rfc3987_syntax, if installed, only to check IRI formats, which no
# notebook uses; building its grammars cost every course process that reads a notebook ~1.3-2.1 CPU s (2.1 of a
# merge job's 2.9, measured), so no course process imports it.
sys.modules.setdefault("rfc3987_syntax", None)

ROOT = Path(__file__).resolve().parent.parent
