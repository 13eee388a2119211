"""Harmless stderr that must not zero a graded cell (nbgrader scores any stderr in a test cell as 0)."""

import re

# One regular expression (nbgrader's IgnorePattern runs `re.search` on each stderr chunk); the multiline flag
# must lead the whole expression, since Python ≥ 3.11 rejects global flags in the middle.
HARMLESS_STDERR = "(?m)" + "|".join(
    [
        r"^.*\b\w*Warning: ",  # Python warnings
        r"^\[W[\s\d]",  # PyTorch C++ warnings
        r"\d+%\|",  # progress bars
        r"^\[IPKernelApp\] WARNING \|",  # ipykernel's start-up log (TCP without encryption)
    ]
)


def is_harmless(stderr_text: str) -> bool:
    """True when nbgrader will drop this stderr chunk before scoring."""
    return re.search(HARMLESS_STDERR, stderr_text) is not None
