"""Bilingual (中文 / English) messages for everything a learner reads."""


def bilingual(zh: str, en: str) -> str:
    """One line in both languages, Chinese first: `中文 / English`."""
    return f"{zh} / {en}"
