"""Benchmarks of the course's attention kernels against PyTorch's (`python -m course bench`)."""

import utils  # noqa: F401  (first: decides GPU or Triton interpreter before anything imports triton)
