"""What a user does in JupyterLab, as Playwright steps: open a notebook, run cells, type into a cell, save,
restart and run all, open the nbgrader panels. Every wait is bounded."""

import re

from playwright.sync_api import Locator, Page, expect

RUN_ALL_TIMEOUT_MS = 240_000  # unit 06 runs in ~11 s in nbclient here; the browser and 2 busy cores add more
CELL_TIMEOUT_MS = 120_000
VALIDATE_TIMEOUT_MS = 240_000  # nbgrader validate runs the whole notebook in a fresh kernel
DONE = re.compile(r"^\[\d+\]:$")
NOT_RUN = re.compile(r"^\[ \]:$")  # neither queued ([*]) nor run ([n])
QUEUED_TIMEOUT_MS = 15_000

# Canvas drawings of a few CJK characters in the font stack of `element`: with no font that has them, Chromium
# draws the same missing-glyph box for each one (and for an unassigned code point).
CJK_GLYPHS_JS = """(element) => {
  const font = getComputedStyle(element).fontFamily;
  const draw = (ch) => {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 48;
    const context = canvas.getContext('2d');
    context.font = `36px ${font}`;
    context.textBaseline = 'top';
    context.fillText(ch, 4, 4);
    return canvas.toDataURL();
  };
  const chars = [...'注意力单元练习'];
  const drawings = chars.map(draw);
  const box = draw('\\u{10FFFD}');
  return {font, distinct: new Set(drawings).size, chars: chars.length,
          boxes: chars.filter((ch, i) => drawings[i] === box)};
}"""


def open_notebook(page: Page, lab, path: str) -> Locator:
    """Open `path` (relative to the server's root) in the page's workspace and wait for its kernel; returns the
    notebook panel."""
    workspace = page.url.split("?")[0].split("/tree/")[0]  # …/lab/workspaces/<name>
    page.goto(f"{workspace}/tree/{path}?token={lab.token}")
    panel = page.locator(".jp-NotebookPanel").filter(visible=True)
    panel.locator(".jp-Cell").first.wait_for()
    expect(panel.locator(".jp-Notebook-ExecutionIndicator")).to_have_attribute(
        "data-status", "idle", timeout=CELL_TIMEOUT_MS
    )
    return panel


def code_cell(panel: Locator, containing: str) -> Locator:
    """The first code cell whose source contains `containing`."""
    return (
        panel.locator(".jp-CodeCell").filter(has=panel.page.locator(".cm-content", has_text=containing)).first
    )


def run_cell(cell: Locator, timeout_ms: int = CELL_TIMEOUT_MS) -> str:
    """Click into `cell`, run it with the toolbar's ▶, wait until it has finished; returns its output text."""
    cell.locator(".cm-content").click()
    expect(cell).to_have_class(re.compile(r"\bjp-mod-active\b"))
    panel = cell.locator("xpath=ancestor::div[contains(@class, 'jp-NotebookPanel')]")
    prompt = cell.locator(".jp-InputArea-prompt")
    for _ in range(3):  # a click the toolbar drops (seen once in CI: "[ ]:" for 120 s) is clicked again
        panel.locator('jp-button[data-command="notebook:run-cell-and-select-next"]').click()
        try:
            expect(prompt).not_to_have_text(NOT_RUN, timeout=QUEUED_TIMEOUT_MS)
            break
        except AssertionError:
            cell.locator(".cm-content").click()
    expect(prompt).to_have_text(DONE, timeout=timeout_ms)
    return cell.locator(".jp-Cell-outputArea").inner_text()


def type_into(cell: Locator, text: str) -> None:
    """Replace the cell's source by `text`, as a student typing (or pasting) it into the editor."""
    cell.locator(".cm-content").click()
    cell.page.keyboard.press("Control+a")
    cell.page.keyboard.insert_text(text)


def save(panel: Locator) -> None:
    panel.locator('jp-button[data-command="docmanager:save"]').click()
    expect(panel.page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty")).to_have_count(0)


def restart_and_run_all(panel: Locator) -> None:
    """Kernel › Restart Kernel and Run All Cells (the toolbar's ⏩), confirmed; waits until every code cell ran."""
    page = panel.page
    panel.locator('jp-button[data-command="notebook:restart-run-all"]').click()
    page.locator(".jp-Dialog .jp-mod-accept").click()
    expect(panel.locator(".jp-Notebook-ExecutionIndicator")).to_have_attribute("data-status", "busy")
    page.wait_for_function(
        """(panel) => [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')]
                        .every((p) => /^\\[\\d+\\]:$/.test(p.textContent.trim()))""",
        arg=panel.element_handle(),
        timeout=RUN_ALL_TIMEOUT_MS,
        polling=500,
    )
    expect(panel.locator(".jp-Notebook-ExecutionIndicator")).to_have_attribute("data-status", "idle")


def validate(panel: Locator) -> tuple[bool, str]:
    """Click the notebook's Validate button (nbgrader saves, then validates); (passed, dialog text), closed."""
    page = panel.page
    panel.locator("jp-button.validate-button").click()
    dialog = page.locator(".nbgrader-SuccessDialog, .nbgrader-ErrorDialog")
    dialog.wait_for(timeout=VALIDATE_TIMEOUT_MS)
    passed = "nbgrader-SuccessDialog" in (dialog.get_attribute("class") or "")
    text = dialog.inner_text()
    dialog.locator("button.jp-Dialog-button").first.click()
    expect(dialog).to_have_count(0)
    return passed, text


def open_nbgrader(page: Page, command: str) -> None:
    """Nbgrader menu › the item for `command` (e.g. "nbgrader:open-assignment-list")."""
    page.locator("#jp-menu-panel .lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    page.locator(f'#jp-mainmenu-nbgrader li[data-command="{command}"]').click()


def cjk_glyphs(element: Locator) -> dict:
    return element.evaluate(CJK_GLYPHS_JS)
