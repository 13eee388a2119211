"""`python -m course …`: the course's command line."""

from course.cli import main

raise SystemExit(main())
