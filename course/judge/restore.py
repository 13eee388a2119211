"""nbgrader's OverwriteCells, which also restores a graded or solution cell's flags from the instructor's copy.

nbgrader restores a locked cell's source and points, but not whether it is a test (grade) or solution cell: a test
cell re-tagged as an ordinary cell then fails its checksum and the whole notebook with it ("Inconsistent
checksums"). Here the flags come back first, the cell is restored and graded as usual, and its grade_id is kept in
the notebook's metadata so the judge flags the submission for review.
"""

from __future__ import annotations

from nbgrader.api import MissingEntry
from nbgrader.preprocessors import OverwriteCells

ALTERED = "flash_course_altered_cells"  # notebook metadata: grade_ids whose nbgrader flags were changed


class RestoreTestCells(OverwriteCells):
    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None and self.restore_flags(cell, grade_id):
            self.altered.append(grade_id)
        return super().preprocess_cell(cell, resources, cell_index)

    def preprocess(self, nb, resources):
        self.altered: list[str] = []
        nb, resources = super().preprocess(nb, resources)
        if self.altered:
            nb.metadata[ALTERED] = self.altered
        return nb, resources

    def restore_flags(self, cell, grade_id: str) -> bool:
        """Put back the instructor's grade and solution flags (and points); whether any had been changed."""
        where = (grade_id, self.notebook_id, self.assignment_id)
        try:
            self.gradebook.find_source_cell(*where)
        except MissingEntry:
            return False  # not an instructor's cell: nbgrader drops its grade_id
        meta = cell.metadata.nbgrader
        expected = {"grade": self.exists(self.gradebook.find_graded_cell, where)}
        expected["solution"] = self.exists(self.gradebook.find_solution_cell, where)
        changed = {key: value for key, value in expected.items() if bool(meta.get(key)) != value}
        for key, value in changed.items():
            self.report_change(grade_id, key, value, meta.get(key))
            meta[key] = value
        if expected["grade"] and "points" not in meta:
            meta["points"] = float(self.gradebook.find_graded_cell(*where).max_score)
        return bool(changed)

    @staticmethod
    def exists(find, where) -> bool:
        try:
            find(*where)
        except MissingEntry:
            return False
        return True
