"""course/glossary.md, the course's terms in both languages: every row is complete and bilingual, no term is
listed twice, the terms issues 34 and 47 found undefined are there, unit 10 uses the glossary's Chinese for the
hardware terms it defines at first use, one Chinese term per concept across the units (`VARIANTS`), and every
notebook links the glossary where the student bundle puts it."""

import re

from course import ROOT, bilingual, notebooks

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


# One Chinese term per concept (issue 47): the glossary's, never the other one some units used. A variant is a
# regular expression, searched in every notebook, the student's utils (messages, labels) and the judge's messages.
VARIANTS = {
    "subnormal": "规格化",  # unit 09 said 非规格化数
    "recomputation / recompute": "重算",  # units 01, 02, 05, 08, 10
    "memory model": "显存模型",  # unit 05
    "TMA reduce-add": "TMA (的)?归约(?!写回)",  # unit 10
    "softmax scale": "softmax 的缩放因子",  # unit 10
}


def student_facing_texts() -> dict[str, str]:
    paths = [
        *source_notebooks(),
        *(ROOT / "utils").rglob("*.py"),
        *(ROOT / "course" / "judge").glob("unit*.py"),
    ]
    return {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in paths}


def test_one_chinese_term_per_concept_across_the_units():
    terms, texts = rows(), student_facing_texts()
    for english, variant in VARIANTS.items():
        chinese = re.sub(r"（.*?）", "", terms[english])
        assert any(chinese in text for text in texts.values()), (english, chinese)  # the term the units use
        assert not [name for name, text in texts.items() if re.search(variant, text)], (english, variant)


# Parentheses after Chinese that hold no English term being defined: a place, an operation's or a module's
# name, a tuple of strides, a tolerance
NOT_TERMS = {"cpu", "max", "linear", "batch", "rtol 1e-5"}
FIRST_USE = re.compile(r"[\u4e00-\u9fff]+（([A-Za-z][A-Za-z0-9 \-]*[A-Za-z0-9])(?:[，,][^）]*)?）")


def glossary_names() -> set[str]:
    """Every name a glossary row gives a term, lower case: each of "a / b", with and without its parenthesis,
    and what the parentheses in either language hold (an abbreviation: SM, LSE)."""
    names = set()
    for english, chinese in rows().items():
        for part in english.split(" / "):
            names |= {part.lower(), re.sub(r"\s*\(.*?\)", "", part).lower()}
        for pair in re.findall(r"\((.*?)\)|（(.*?)）", english + chinese):
            names |= {inner.lower() for inner in pair if inner}
    return names


def test_every_term_a_unit_introduces_is_in_the_glossary():
    """A unit introduces a term as 中文（English） (the glossary's rule for a first use): each is a glossary term."""
    names, missing = glossary_names(), set()
    for path in source_notebooks():
        for cell in notebooks.read(path).cells:
            if cell.cell_type == "markdown":
                chinese, _ = bilingual.halves(cell.source)
                for term in FIRST_USE.findall(chinese):
                    if term.lower() not in names | NOT_TERMS and term.lower().removesuffix("s") not in names:
                        missing.add((path.parent.name, term))
    assert not missing, sorted(missing)


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
