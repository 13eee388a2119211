"""The notebooks' visible self-checks: what a unit's test cells call before the judge grades.

- `memory`, `triton_basics`, `flash_triton`, `hopper`: the checks of units 01, 07, 08 and 10 (the other units'
  checks are written in their test cells);
- `isolation`: `run_check` runs a check in a child process on the student's module, so a crashing kernel fails
  only that check;
- `guarded`, `launches`: checking tools for student kernels (guarded allocations; launch counting and forbidden
  PyTorch operators), used by these checks and by the judge's child (`utils.judged`) alike.

Every check runs the student's code as the judge runs it: the module built by `utils.judged.student_module`
(the unit's preamble plus the solution cells), the one builder the judge uses too.
"""
