"""The judge's child side: what runs, in the judge's sandbox, around the student's code. Students never call it.

- `student_module`: the one builder of the student's module (the unit's preamble plus the solution cells),
  used by the judge (`course.judge`) and by the notebooks' visible self-checks (`utils.checks`) alike;
- `run`: the child process (`python -m utils.judged.run`) that loads that module and runs the judge's calls (it
  loads the module and reports a failure as the self-checks' child does: `utils.checks.isolation`);
- `tensor_files`, `link`: tensors as plain data, and requests to the services the judge keeps in its own process;
- `triton_calls`, `slow_memory`, `sweeps`, `recompute`, `systems`: the entry points a unit's preamble imports
  (one call of a Triton exercise; slow-memory exercises; unit 04's read counts; units 05 and 09).

Nothing here decides a grade: the judge, in its own process, compares what the child returns with its own
references.
"""
