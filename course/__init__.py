"""The course's own tooling: `python -m course check | release | grade | selftest | demo | bench`."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
