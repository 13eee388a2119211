"""course.bilingual: each markdown cell's Chinese and English halves carry the same formulas and code spans, in
every source notebook (the layout rule of course/AUTHORING.md, "Bilingual layout")."""

from pathlib import Path

import pytest

from course import notebooks
from course.bilingual import cell_problems, halves, notebook_problems, spans

ROOT = Path(__file__).resolve().parent.parent
SOURCE_NOTEBOOKS = sorted((ROOT / "source").glob("*/*.ipynb"))

CELL = """## 练习 1：前向 · Exercise 1: forward

对每一行求 $y = x w$，返回 `y`。

For every row compute $y = x w$ and return `y`.

$$\\sum_c x_c w_c$$

```python
y = (x * w).sum(-1)  # 中文注释 / shared code
```

| 符号 · symbol | `C` |
|---|---|

- 用 `tl.sum` 归约。 / Reduce with `tl.sum`.
> 注记 · Note：`a / b` 与 $p / q$ 不算分隔符 / `a / b` and $p / q$ are no separators.
**交付 · Deliverable:** `f(x)` 返回 `(y, z)`。 / `f(x)` returns `(y, z)` (float32 / float16)."""


def test_halves_follow_the_layout_rule():
    zh, en = halves(CELL)
    assert "练习 1" in zh and "Exercise 1" in en and "Exercise" not in zh and "练习" not in en
    assert "对每一行" in zh and "For every row" in en
    assert "用 `tl.sum` 归约" in zh and "Reduce with `tl.sum`" in en
    assert "不算分隔符" in zh and "are no separators" in en and "不算" not in en
    assert "返回 `(y, z)`" in zh and "returns `(y, z)` (float32 / float16)" in en
    for shared in ("\\sum_c", "中文注释", "`C`"):  # display formulas, code blocks and tables are in neither
        assert shared not in zh and shared not in en


def test_a_cell_with_the_same_formulas_and_code_in_both_halves_has_no_problems():
    assert cell_problems(CELL) == []
    assert spans(halves(CELL)[0]) == spans(halves(CELL)[1])


def test_a_formula_or_code_span_missing_from_one_half_is_named():
    thin = "更新 $m' = \\max(m, s)$，再用 `exp`。\n\nUpdate the maximum, then use `exp`."
    assert cell_problems(thin) == ['only in Chinese: ["$m\' = \\\\max(m, s)$"]']
    assert cell_problems("只有中文 `x`。\n\nOnly English `y`.") == [
        "only in Chinese: ['`x`']",
        "only in English: ['`y`']",
    ]


def test_words_inside_a_formulas_text_are_translated_like_prose():
    assert cell_problems("显存 $\\text{内存} \\propto N^2$。\n\nMemory $\\text{memory} \\propto N^2$.") == []
    assert cell_problems("显存 $\\text{内存} \\propto N^2$。\n\nMemory $\\text{memory} \\propto N$.") != []


def test_chinese_inside_a_code_span_does_not_make_a_line_chinese():
    assert halves('打印。\n\nPrint `bilingual("设备", "device")`.') == (
        "打印。",
        'Print `bilingual("设备", "device")`.',
    )


@pytest.mark.parametrize("path", SOURCE_NOTEBOOKS, ids=lambda p: p.parent.name)
def test_every_markdown_cell_has_the_same_formulas_and_code_in_both_languages(path):
    problems = notebook_problems(notebooks.read(path))
    assert problems == [], f"{path.relative_to(ROOT)}:\n" + "\n".join(problems)
