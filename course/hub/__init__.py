"""`bash course.sh hub`: a JupyterHub on this machine for a pilot or a small class (instructor guide, section 8.8).

Each student on the course's roster is a Unix account of its own (home 0700) whose server runs from the student
bundle's environment (no `course` package, no `source/`); the instructor's server runs the whole course with
formgrader. nbgrader's exchange is a folder the hub owns. Passwords are set on first login and stored hashed.
"""
