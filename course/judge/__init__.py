"""The judge: decides graded cells' points outside the student's code (instructor-only).

`preprocessor.Judge` runs inside `nbgrader autograde`; `units` lists each notebook's judge; `sandbox` is
where the student's code runs (its limits fitted to the host's tables by `tables`); `student_code` builds and scans
it; `child` talks to the sandboxed child; `kernel` runs the notebook's kernel there, behind its `relay`.
"""
