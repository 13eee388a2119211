"""A student's and an instructor's JupyterLab in a real browser: the nbgrader extensions load, a student fetches
unit 06, types the answers, sees a self-check pass and Validate accept the notebook (and reject it untouched);
"Restart Kernel and Run All" of unit 06 runs clean with every plot drawn; every unit renders with its Chinese
text drawn; the sliders of units 03 and 04 redraw their figures.

Unit 06 is the notebook run in full: PyTorch only, ~11 s top to bottom on this CPU (unit 01: ~22 s).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytest.importorskip(
    "playwright.sync_api",
    reason="浏览器测试已跳过：没有安装 playwright 包 / browser suite skipped: the playwright package is not installed",
)

from course_lab import COURSE_ID, RELEASED, ROOT  # noqa: E402
from labpage import (  # noqa: E402
    cjk_glyphs,
    code_cell,
    open_nbgrader,
    open_notebook,
    restart_and_run_all,
    run_cell,
    save,
    type_into,
    validate,
)
from playwright.sync_api import expect  # noqa: E402

from course import notebooks  # noqa: E402
from course.grading import submissions  # noqa: E402

NOTEBOOK = "flash_attention_pytorch.ipynb"
UNITS = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "release").glob("*/*.ipynb"))
SLIDERS = [
    ("release/03_tiling/tiling.ipynb", "tiling.loop_slider("),
    ("release/04_online_softmax/online_softmax.ipynb", "online_softmax_plots.explore("),
]
CJK = re.compile(r"[\u4e00-\u9fff]")
FONT_WARNINGS = re.compile(r"Glyph \d+ .*missing from|missing from (current )?font|findfont: Font family")
SCREENSHOTS = os.environ.get("COURSE_BROWSER_SCREENSHOTS")  # where the README's screenshot is written, if set


def cell_at(panel, index: int):
    return panel.locator(".jp-Notebook .jp-Cell").nth(index)


def grade_ids(nb) -> dict[str, int]:
    return {
        notebooks.meta(cell).get("grade_id"): i for i, cell in enumerate(nb.cells) if notebooks.meta(cell)
    }


def answers() -> dict[str, str]:
    return submissions.reference_answers(notebooks.read(ROOT / "source" / RELEASED / NOTEBOOK))


def test_nbgrader_extensions_load(lab, page):
    open_nbgrader(page, "nbgrader:open-assignment-list")
    released = page.locator("#released_assignments_list > .list_item")
    expect(released.locator(".item_name")).to_have_text(RELEASED)
    expect(released.locator(".item_course")).to_have_text(COURSE_ID)

    open_nbgrader(page, "nbgrader:open-formgrader")
    formgrader = page.frame_locator(".jp-MainAreaWidget:not(.lm-mod-hidden) iframe")
    expect(formgrader.locator("h1", has_text="Manage Assignments")).to_be_visible()
    expect(formgrader.locator("tr", has_text=RELEASED)).to_contain_text("released")

    panel = open_notebook(page, lab, f"source/{RELEASED}/{NOTEBOOK}")
    expect(panel.locator("jp-button.validate-button")).to_be_visible()
    page.locator(".lm-TabBar-tab[title='Nbgrader Create Assignment']").click()
    expect(page.locator(".nbgrader-NotebookWidget")).to_be_visible()
    shown = page.locator(".nbgrader-CellType select").evaluate_all("(all) => all.map((s) => s.value)")
    nb = notebooks.read(lab.root / "source" / RELEASED / NOTEBOOK)
    assert shown.count("solution") == len(notebooks.solution_cells(nb))
    assert shown.count("tests") == len(notebooks.test_cells(nb))


def test_student_fetches_types_answers_and_validates(lab, page):
    open_nbgrader(page, "nbgrader:open-assignment-list")
    page.locator("#released_assignments_list > .list_item .item_status button").click()
    expect(page.locator("#fetched_assignments_list > .list_item .item_name").first).to_have_text(RELEASED)
    path = lab.root / RELEASED / NOTEBOOK
    assert path.exists(), "Fetch did not write the notebook into the student's folder"

    panel = open_notebook(page, lab, f"{RELEASED}/{NOTEBOOK}")
    passed, message = validate(panel)
    assert not passed and "NotImplementedError" in message, message

    index = grade_ids(notebooks.read(path))
    for grade_id, answer in answers().items():
        type_into(cell_at(panel, index[grade_id]), answer)
    run_cell(panel.locator(".jp-CodeCell").first)  # the imports
    for grade_id in ("grading_setup", "fa_score_tile"):
        run_cell(cell_at(panel, index[grade_id]))
    out = run_cell(cell_at(panel, index["test_score_tile"]))
    assert "self-check passed" in out, out

    passed, message = validate(panel)
    assert passed, message
    typed = notebooks.solution_cells(notebooks.read(path))
    assert {gid: cell.source for gid, cell in typed.items()} == answers(), (
        "the editor changed the typed answers"
    )


def test_restart_and_run_all_of_unit06(lab, page):
    path = lab.root / "student" / NOTEBOOK
    path.parent.mkdir(exist_ok=True)
    notebooks.write(
        submissions.filled(notebooks.read(lab.root / "release" / RELEASED / NOTEBOOK), answers()), path
    )
    panel = open_notebook(page, lab, f"student/{NOTEBOOK}")
    restart_and_run_all(panel)
    save(panel)

    nb = nbformat.read(path, as_version=4)
    code = [(i, cell) for i, cell in enumerate(nb.cells) if cell.cell_type == "code"]
    assert all(cell.execution_count for _, cell in code), "a code cell did not run"
    errors = [(i, o.ename, o.evalue) for i, cell in code for o in cell.outputs if o.output_type == "error"]
    assert not errors, errors
    stderr = "".join(o.text for _, cell in code for o in cell.outputs if o.get("name") == "stderr")
    assert not FONT_WARNINGS.search(stderr), stderr
    plots = [i for i, cell in code if "plt.show()" in cell.source]
    assert plots and all(any("image/png" in o.get("data", {}) for o in nb.cells[i].outputs) for i in plots)
    images = panel.locator(".jp-OutputArea .jp-RenderedImage img")
    drawn = sum(1 for _, cell in code for o in cell.outputs if "image/png" in o.get("data", {}))
    expect(images).to_have_count(drawn)
    assert images.evaluate_all("(all) => all.every((img) => img.complete && img.naturalWidth > 100)")

    tile_loop = next(i for i, cell in enumerate(nb.cells) if cell.source.startswith("## 分块循环"))
    cell_at(panel, tile_loop).evaluate("(cell) => cell.scrollIntoView({block: 'start'})")
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=Path(SCREENSHOTS) / "unit06_jupyterlab.png")


def test_plot_labels_have_a_cjk_font(lab):
    """The kernel's matplotlib (the server's environment) finds a CJK font, so plot labels are bilingual."""
    found = subprocess.run(
        [sys.executable, "-c", "from utils import plotting; print(plotting.cjk_font())"],
        env=dict(os.environ, MPLCONFIGDIR=str(lab.home / "matplotlib")),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() != "None", "no CJK font: run bash tests/browser/setup.sh (fonts-noto-cjk)"


@pytest.mark.parametrize("notebook", UNITS)
def test_unit_renders_with_its_chinese_text(lab, page, notebook):
    panel = open_notebook(page, lab, notebook)
    nb = notebooks.read(ROOT / notebook)
    expect(panel.locator(".jp-Notebook .jp-Cell")).to_have_count(len(nb.cells))
    title = panel.locator(".jp-RenderedMarkdown h1").first
    expect(title).to_contain_text(" · ")
    assert CJK.search(title.inner_text())
    if any("$" in cell.source for cell in nb.cells if cell.cell_type == "markdown"):
        expect(panel.locator(".jp-RenderedMarkdown mjx-container").first).to_be_visible()
    glyphs = cjk_glyphs(title)
    assert glyphs["distinct"] == glyphs["chars"] and not glyphs["boxes"], glyphs


@pytest.mark.parametrize(("notebook", "call"), SLIDERS)
def test_visual_follows_its_slider(lab, page, notebook, call):
    panel = open_notebook(page, lab, notebook)
    run_cell(panel.locator(".jp-CodeCell").first)  # the imports
    cell = code_cell(panel, call)
    run_cell(cell)
    readout, image = cell.locator(".widget-readout"), cell.locator(".widget-interact img")
    expect(image).to_have_count(1)
    value, drawing = readout.inner_text(), image.get_attribute("src")
    cell.locator(".noUi-handle").first.focus()
    page.keyboard.press("ArrowRight")
    expect(readout).not_to_have_text(value)
    expect(image).not_to_have_attribute("src", drawing)
