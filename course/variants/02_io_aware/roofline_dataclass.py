# selftest-replaces: ai_roofline
# Variant: a small dataclass for the machine, the function returns a tuple built from it. / 变体：用一个小数据类表示机器。
from dataclasses import dataclass


@dataclass(frozen=True)
class Machine:
    peak_flops: float
    peak_bandwidth: float

    def attainable(self, intensity):
        return min(self.peak_flops, intensity * self.peak_bandwidth)

    def bound(self, intensity):
        return "compute" if intensity * self.peak_bandwidth >= self.peak_flops else "memory"


def roofline(flops, nbytes, peak_flops, peak_bandwidth):
    machine, intensity = Machine(peak_flops, peak_bandwidth), flops / nbytes
    return machine.attainable(intensity), machine.bound(intensity)
