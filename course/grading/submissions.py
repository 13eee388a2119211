"""Build student submissions from release notebooks, the way a student fills them in."""

from __future__ import annotations

from pathlib import Path

from course import notebooks


def reference_answers(source_nb) -> dict[str, str]:
    """{grade_id: reference answer} of every solution cell, marker lines removed."""
    return {
        gid: notebooks.without_markers(cell.source)
        for gid, cell in notebooks.solution_cells(source_nb).items()
    }


def filled(release_nb, answers: dict[str, str]):
    """The release notebook with the given solution cells answered."""
    for grade_id, source in answers.items():
        release_nb = notebooks.with_cell(release_nb, grade_id, source)
    return release_nb


def write_student(release_unit: Path, source_unit: Path, dest: Path, overrides: dict[str, str]) -> None:
    """Write a submission of one unit: reference answers everywhere except the `overrides` ({grade_id: source})."""
    for path in sorted(release_unit.glob("*.ipynb")):
        answers = reference_answers(notebooks.read(source_unit / path.name))
        answers.update({gid: src for gid, src in overrides.items() if gid in answers})
        notebooks.write(filled(notebooks.read(path), answers), dest / path.name)
