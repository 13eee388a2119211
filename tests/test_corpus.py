"""The selftest corpora (wrong implementations, variants, red-team attacks): entries that are patches against
today's reference answer still apply and still change it; the patch format itself."""

import shutil

import pytest
from pipeline_fixture import FIXTURE, UNIT

from course import catalogue, cli, notebooks, wrong
from course.layout import COURSE, Course

KINDS = {"wrong": COURSE.wrong, "variant": COURSE.variants, "redteam": COURSE.redteam}
HEADER = (
    "# selftest-notebook: softmax.ipynb\n# selftest-replaces: softmax_impl\n# selftest-must-fail: test_a\n"
)
PATCH = """@@ -3,3 +3,3 @@
     weights = [math.exp(x - top) for x in xs]
     total = sum(weights)
-    return [w / total for w in weights]
+    return weights
"""


@pytest.mark.parametrize("kind", KINDS)
def test_every_entry_builds_against_todays_reference_and_changes_it(kind):
    """A patch that no longer applies raises while loading; one that became a no-op is a defect, not a pass."""
    for unit in COURSE.units():
        for impl in wrong.load(KINDS[kind] / unit, kind):
            assert impl.body != wrong.reference(impl.path, impl.notebook, impl.replaces), impl.path


@pytest.mark.parametrize("kind", KINDS)
def test_every_whole_entry_says_why_it_is_no_patch(kind):
    """A whole cell is for a different program and says why (`selftest-whole`; a variant's `Variant:` line names
    its design); one that is the reference with a change is a patch (AUTHORING)."""
    silent = [
        str(impl.path.relative_to(COURSE.checkout))
        for unit in COURSE.units()
        for impl in wrong.load(KINDS[kind] / unit, kind)
        if not impl.patched
        and not impl.whole
        and not (kind == "variant" and impl.explanation.startswith("Variant:"))
    ]
    assert silent == [], "add '# selftest-whole: <why>' or make them patches (course/AUTHORING.md)"


@pytest.fixture
def course(tmp_path):
    """The fixture course's notebooks with an empty corpus beside them."""
    shutil.copytree(FIXTURE / "source", tmp_path / "source")
    (tmp_path / "wrong" / UNIT).mkdir(parents=True)
    return Course(tmp_path, tmp_path / "wrong")


def entry(course: Course, text: str):
    path = course.wrong / UNIT / "softmax_unnormalised.py"
    path.write_text(text, encoding="utf-8")
    return path


def edit_reference(course: Course, old: str, new: str) -> None:
    path = course.source / UNIT / "softmax.ipynb"
    nb = notebooks.read(path)
    cell = notebooks.solution_cells(nb)["softmax_impl"]
    cell.source = cell.source.replace(old, new)
    notebooks.write(nb, path)


def test_a_patch_is_built_from_todays_reference(course):
    impl = wrong.parse(entry(course, HEADER + "# Mistake: never normalises.\n" + PATCH))
    assert impl.patched and impl.explanation == "Mistake: never normalises."
    assert impl.body == (
        'def stable_softmax(xs):\n    """Softmax of a list of floats, safe for large inputs."""\n    top = max(xs)\n'
        "    weights = [math.exp(x - top) for x in xs]\n    total = sum(weights)\n    return weights"
    )
    edit_reference(course, "    top = max(xs)", "    # the largest input\n    top = max(xs)")
    assert "    # the largest input\n" in wrong.parse(course.wrong / UNIT / "softmax_unnormalised.py").body


def test_an_empty_context_line_is_a_blank_line_whose_space_an_editor_stripped(course):
    edit_reference(course, "    total = sum(weights)\n", "    total = sum(weights)\n\n")
    patch = "@@ -5,3 +5,3 @@\n     total = sum(weights)\n\n-    return [w / total for w in weights]\n+    return weights\n"
    assert wrong.parse(entry(course, HEADER + patch)).body.endswith(
        "total = sum(weights)\n\n    return weights"
    )


REPEATED = "    weights = [math.exp(x - top) for x in xs]\n    total = sum(weights)\n    return [w / total for w in weights]"


@pytest.mark.parametrize(
    "old, new, why",
    [
        (
            "[w / total for w in weights]",
            "[w / total for w in weights if total]",
            "its old lines are not in it",
        ),
        ("    top = max(xs)", "    top = max(xs)\n" + REPEATED, "stand in it 2 times"),
    ],
)
def test_a_patch_that_no_longer_applies_fails_loudly_naming_its_hunk(course, old, new, why):
    """The second reference repeats the hunk's lines, neither where `@@ -9` says: which one is meant is unclear."""
    path = entry(course, HEADER + PATCH.replace("@@ -3,3 +3,3 @@", "@@ -9,3 +9,3 @@"))
    edit_reference(course, old, new)
    with pytest.raises(ValueError, match=f"softmax_unnormalised.py: hunk 1 no longer applies.*{why}"):
        wrong.parse(path)


def test_an_entry_without_a_notebook_header_takes_the_notebook_that_has_its_cell(course):
    """The cell id says which notebook: `selftest-notebook` is needed only where two notebooks share one."""
    impl = wrong.parse(entry(course, HEADER.replace("# selftest-notebook: softmax.ipynb\n", "") + PATCH))
    assert impl.notebook == "softmax.ipynb" and impl.body.endswith("    return weights")
    shutil.copy(course.source / UNIT / "softmax.ipynb", course.source / UNIT / "softmax_copy.ipynb")
    with pytest.raises(ValueError, match="2 notebooks in .* have solution cell softmax_impl; name one"):
        wrong.parse(course.wrong / UNIT / "softmax_unnormalised.py")
    assert wrong.parse(entry(course, HEADER + PATCH)).notebook == "softmax.ipynb"  # named: no ambiguity


def test_a_cell_that_no_notebook_has_is_a_clear_error(course):
    text = HEADER.replace("# selftest-notebook: softmax.ipynb\n", "").replace("softmax_impl", "no_such_cell")
    with pytest.raises(ValueError, match="0 notebooks in .* have solution cell no_such_cell"):
        wrong.parse(entry(course, text + PATCH))


def test_a_patch_without_its_notebook_above_it_is_a_clear_error(tmp_path):
    (tmp_path / UNIT).mkdir()
    path = tmp_path / UNIT / "lost.py"
    path.write_text(HEADER + PATCH, encoding="utf-8")
    with pytest.raises(ValueError, match=f"no source/{UNIT}/softmax.ipynb in a folder above it"):
        wrong.parse(path)


def test_a_line_that_is_no_diff_line_is_a_clear_error(course):
    with pytest.raises(ValueError, match="not a diff line: 'return weights'"):
        wrong.parse(entry(course, HEADER + PATCH + "return weights\n"))


def test_the_catalogue_shows_each_mistake_as_its_diff_with_its_explanation_and_what_must_fail(course, capsys):
    entry(course, HEADER + "# Mistake: never normalises.\n# 错误：没有归一化。\n" + PATCH)
    whole = (
        HEADER
        + "# selftest-whole: another program\n# Mistake: the identity.\ndef stable_softmax(xs):\n    return xs\n"
    )
    (course.wrong / UNIT / "softmax_identity.py").write_text(whole, encoding="utf-8")
    assert catalogue.main("01", "unnormalised", course) == 0
    out = capsys.readouterr().out
    assert out.startswith("01_softmax/softmax_unnormalised  (softmax.ipynb, softmax_impl)\n")
    assert "  Mistake: never normalises.\n  错误：没有归一化。\n  必须失分 / must fail: test_a\n" in out
    assert "     total = sum(weights)\n-    return [w / total for w in weights]\n+    return weights\n" in out
    assert "\033" not in out and "softmax_identity" not in out  # no colour off a terminal; only the one named
    coloured = catalogue.catalogue(course, None, None, colour=True)
    assert (
        "\033[31m-    return [w / total for w in weights]\033[0m\n\033[32m+    return weights\033[0m"
        in coloured
    )
    assert "整个单元格 / whole cell (another program)\ndef stable_softmax(xs):\n    return xs\n" in coloured


def test_python_m_course_wrong_lists_the_courses_mistakes_and_names_an_unknown_one(capsys):
    assert cli.main(["wrong", "06", "backward_no_scale"]) == 0
    out = capsys.readouterr().out
    assert "06_flash_attention_pytorch/backward_no_scale  (flash_attention_pytorch.ipynb, fa_backward)" in out
    assert "must fail: test_backward, test_causal, test_autograd_function" in out
    assert cli.main(["wrong", "06", "no_such_mistake"]) == 2
    assert "no wrong implementation named like 'no_such_mistake'" in capsys.readouterr().out


def test_an_entry_on_a_wrong_implementation_is_that_mistake_plus_its_own_change(course):
    """`selftest-on: NAME`: the patch applies to the cell of the unit's wrong implementation NAME (an attack that
    rides on a known mistake shows only the attack), and an edit of that mistake reaches it."""
    entry(course, HEADER + PATCH)
    attack = course.wrong.parent / "redteam" / UNIT / "softmax_prints.py"
    attack.parent.mkdir(parents=True)
    header = HEADER.replace("must-fail: test_a", "caps: test_a=0\n# selftest-class: prints")
    attack.write_text(
        header
        + "# selftest-on: softmax_unnormalised\n@@ -1 +1,2 @@\n+print('hi')\n def stable_softmax(xs):\n"
    )
    built = wrong.parse(attack, "redteam")
    assert built.patched and built.body.startswith("print('hi')\ndef stable_softmax(xs):")
    assert built.body.endswith("    return weights")
    entry(course, HEADER + PATCH.replace("+    return weights", "+    return weights[::-1]"))
    assert wrong.parse(attack, "redteam").body.endswith("    return weights[::-1]")
    attack.write_text(
        header + "# selftest-on: softmax_unnormalised\n"
    )  # the mistake alone; its header attacks
    assert wrong.parse(attack, "redteam").body.endswith("    return weights[::-1]")
    attack.write_text(header + "# selftest-on: no_such_mistake\n")
    with pytest.raises(
        ValueError, match="softmax_prints.py: # selftest-on names no wrong implementation: .*no_such"
    ):
        wrong.parse(attack, "redteam")


@pytest.mark.parametrize("kind", KINDS)
def test_a_whole_entry_is_shorter_than_its_patch_would_be(kind):
    """A cell that reads as the reference with a change is a patch (AUTHORING): whole only where it is shorter."""
    patchable = [
        str(impl.path.relative_to(COURSE.checkout))
        for unit in COURSE.units()
        for impl in wrong.load(KINDS[kind] / unit, kind)
        if not impl.patched
        and len(wrong.patch(wrong.reference(impl.path, impl.notebook, impl.replaces), impl.body).splitlines())
        <= len(impl.body.splitlines())
    ]
    assert patchable == [], "write them as patches: wrong.patch(reference, cell) (course/AUTHORING.md)"


def test_a_patch_carries_the_least_context_that_places_each_hunk():
    reference = "a\nb\nx\nc\nx\nd"
    assert wrong.patch(reference, "a\nB\nx\nc\nx\nd") == "@@ -2 +2 @@\n-b\n+B"  # a find/replace pair
    assert wrong.patch(reference, "a\nb\nx\nc\ny\nd") == "@@ -4,2 +4,2 @@\n c\n-x\n+y"  # x stands twice
    assert wrong.patch(reference, "a\nb\nx\nnew\nc\nx\nd") == "@@ -4 +4,2 @@\n+new\n c"  # x stands twice
    assert wrong.patch(reference, "b\nx\nc\nx\nd\ne") == "@@ -1 +0,0 @@\n-a\n@@ -6 +5,2 @@\n d\n+e"
    for cell in ("", "z", "a\nx\nx\nx\nd", "x\nb\nx\nc\nx\nd\nx"):
        assert wrong.apply_patch(reference, wrong.patch(reference, cell), "test") == cell
