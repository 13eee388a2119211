"""The calls a unit's judge makes, recorded without a child or a notebook run (shared by the unit tests that check
an exercise's stated dtypes and shapes against its judge's cases)."""

from collections.abc import Callable

from course.judge import core
from course.judge.child import Answer


class Recorder:
    """Stands in for the judge's child: records each call's target and arguments and answers it with
    `answers[target]` (a reference), or fails it (an AssertionError: the judge records a failed case and goes on)."""

    def __init__(self, work, answers: dict[str, Callable] | None = None):
        self.work = work
        self.answers = answers or {}
        self.calls: list[tuple[str, tuple]] = []

    def call(self, target: str, *args, **options) -> Answer:
        self.calls.append((target, args))
        if target not in self.answers:
            raise AssertionError("recorded")
        return Answer(self.answers[target](*args))


def recorded_calls(
    unit: core.Unit, grade_id: str, work, answers: dict[str, Callable] | None = None, seed: int = 1
) -> list[tuple[str, tuple]]:
    """(target, arguments) of every call the judge of `grade_id` makes into the student's code, on a CPU."""
    child = Recorder(work, answers)
    core.judge_cell(unit.cells[grade_id], child, seed, on_gpu=False)
    return child.calls
