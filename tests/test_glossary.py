"""course/glossary.md, the course's terms in both languages: every row is complete and bilingual, no term is
listed twice, the terms issues 34 and 47 found undefined are there, unit 10 uses the glossary's Chinese for the
hardware terms it defines at first use, one Chinese term per concept across the units (subnormal), and every
notebook links the glossary where the student bundle puts it."""

import re

from course import ROOT, notebooks

GLOSSARY = ROOT / "course" / "glossary.md"
CJK = re.compile(r"[\u4e00-\u9fff]")
# Used in units 09-10 and defined nowhere before issue 34 (item 8)
REQUIRED = [
    "streaming multiprocessor (SM)", "warp", "GEMM", "tensor core", "mbarrier", "occupancy", "wave", "SDPA",
    "subnormal", "mantissa", "CUDA stream", "CUDA event", "FP8 (e5m2)",
]  # fmt: skip
# Used in units 09-10 and defined nowhere before issue 47
REQUIRED_47 = [
    "self time", "sm80 / sm90", "SXM", "Blackwell", "intra-warpgroup overlap", "epilogue", "Gluon", "SymInt",
    "GradScaler",
]  # fmt: skip
UNIT10_DEFINES = [
    "streaming multiprocessor (SM)",
    "warp",
    "GEMM",
    "tensor core",
    "occupancy",
    "wave",
    "L2 cache",
]


def rows() -> dict[str, str]:
    """{English: 中文} of every table row (header and separator rows left out)."""
    found = {}
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|") or line.startswith(("| English", "|---")):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        assert len(cells) == 3 and cells[0] and cells[1], line
        assert cells[0] not in found, f"{cells[0]} is listed twice"
        found[cells[0]] = cells[1]
    return found


def test_every_term_is_complete_bilingual_and_listed_once():
    terms = rows()
    assert len(terms) > 100
    for english, chinese in terms.items():
        same_name = chinese.replace("（", " (").replace("）", ")") == english  # a name such as FP8 (e4m3)
        assert CJK.search(chinese) or same_name, f"{english}: no Chinese term"


def test_the_terms_issues_34_and_47_found_undefined_are_defined():
    assert not [term for term in REQUIRED + REQUIRED_47 if term not in rows()]


def source_notebooks():
    return sorted((ROOT / "source").glob("*/*.ipynb"))


def test_one_chinese_term_for_subnormal_numbers_in_every_unit():
    """Issue 47: unit 09 said 非规格化数 where the glossary and unit 10 say 次正规数."""
    assert rows()["subnormal"] == "次正规数"
    for path in source_notebooks():
        assert "规格化" not in path.read_text(encoding="utf-8"), path.name


def test_every_notebook_links_the_glossary_where_the_bundle_puts_it():
    """The link is relative to a unit's folder in the student bundle, whose top holds GLOSSARY.md
    (`course.bundle`)."""
    for path in source_notebooks():
        assert "](../GLOSSARY.md)" in notebooks.read(path).cells[0].source, path.name


def test_unit10_uses_the_glossarys_chinese_for_the_terms_it_defines():
    text = "\n".join(c.source for c in notebooks.read(ROOT / "source" / "10_hopper" / "hopper.ipynb").cells)
    terms = rows()
    for english in UNIT10_DEFINES:
        chinese = re.sub(r"（.*?）", "", terms[english])  # the term without its parenthesised abbreviation
        assert chinese in text, (english, chinese)
