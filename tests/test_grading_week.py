"""benchmarks/grading_week.py at a tiny size: a Canvas week of four students (one late, one handed in twice), its
grading stood in for, run through the real commands; it writes its results and its plot."""

import json

from benchmarks import grading_week


def test_a_tiny_week_writes_its_results_and_plot(tmp_path):
    assert grading_week.main(["--students", "4", "--real", "0", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "grading_week.json").read_text(encoding="utf-8"))
    assert all(result["seconds"][step] > 0 for step in grading_week.TIMED)
    assert result["timed_total_seconds"] == round(sum(result["seconds"][s] for s in grading_week.TIMED), 1)
    assert (result["grades_rows"], result["canvas_students"]) == (8, 4)  # two units each; one line a student
    assert result["late_pairs"] == 2  # s003, in both units
    assert sorted(result["sheet_rows"].values()) == [2, 2]  # two graders, two students each
    assert result["pages_made_by_feedback"] == 4  # unit 01's pages: their written answers are graded now
    assert result["sample"] == [] and result["grading_estimate_for_the_class"] is None
    assert (tmp_path / "grading_week.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
