"""The peak GPU memory of a judged call stays the judge's measurement (issue 45).

The student's code shares the judge child's process: `torch.cuda.reset_peak_memory_stats()` at the end of a forward
would hide an N×N intermediate from the peak that units 06 and 08 grade. Before the student's module loads, the
allocator's two resets (peak and accumulated statistics) are replaced in `torch._C`, where every Python route to
them ends, by ones that pass through outside a judged call and, during one, do nothing but count the attempt, which
the judge flags for review. The judge resets through the original it kept. A second look, not a proof: code in the
same process could still find the original (through `gc`) or the allocator (through `ctypes`).
"""

from __future__ import annotations

import contextlib

RESETS = ("_cuda_resetPeakMemoryStats", "_cuda_resetAccumulatedMemoryStats")


class PeakGuard:
    """`attempts`: the resets the student's code asked for during judged calls (each one ignored)."""

    def __init__(self):
        import torch

        self.originals = {name: getattr(torch._C, name) for name in RESETS if hasattr(torch._C, name)}
        self.attempts, self.judging = 0, False
        for name, original in self.originals.items():
            setattr(torch._C, name, self.guarded(original))

    def guarded(self, original):
        def reset(*args, **kwargs):
            if self.judging:
                self.attempts += 1
                return None
            return original(*args, **kwargs)

        return reset

    def reset_peak(self) -> None:
        """The judge's own reset of the peak, on the current device."""
        import torch

        self.originals[RESETS[0]](torch.cuda.current_device())

    @contextlib.contextmanager
    def judged_call(self):
        """While the student's function runs: its resets are ignored and counted."""
        self.judging = True
        try:
            yield
        finally:
            self.judging = False
