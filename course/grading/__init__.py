"""The grading pipeline: intake, grading jobs in child processes, gradebook merges, the semester's late rules,
LMS exports. The CLI (`course.cli`) and the authoring tools call into it; the judge (`course.judge`) runs inside it."""
