"""Every unit judge, by the notebook it judges: each `course/judge/unitNN.py` defines one `UNIT`."""

import importlib
import pkgutil

import course.judge
from course.judge.core import Unit


def _discover() -> dict[str, Unit]:
    modules = sorted(
        m.name
        for m in pkgutil.iter_modules(course.judge.__path__)
        if m.name.startswith("unit") and m.name != "units"
    )
    units = [importlib.import_module(f"course.judge.{name}").UNIT for name in modules]
    return {unit.notebook: unit for unit in units}


UNITS: dict[str, Unit] = _discover()
