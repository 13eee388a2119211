"""Student-facing attention: the naive baseline, input checks, and attention for notebook demos.

The course's reference solutions (FlashAttention in PyTorch and Triton) live in the instructor package
`course.reference`; `course_kernels()` returns it where it is installed.
"""

from utils.attention.demo import course_kernels, demo_attention, sdpa
from utils.attention.naive import naive_attention

__all__ = ["course_kernels", "demo_attention", "naive_attention", "sdpa"]
