"""Every unit judge, by the notebook it judges."""

from course.judge import unit06, unit07
from course.judge.core import Unit

UNITS: dict[str, Unit] = {unit.notebook: unit for unit in (unit06.UNIT, unit07.UNIT)}
