# selftest-replaces: ai_roofline
# Variant: NumPy's minimum over the two roofs, converted to a Python float. / 变体：用 NumPy 在两条屋顶中取最小。
import numpy as np


def roofline(flops, nbytes, peak_flops, peak_bandwidth):
    roofs = np.array([peak_flops, flops / nbytes * peak_bandwidth], dtype=np.float64)
    attainable = float(roofs.min())
    return attainable, ("memory" if flops / nbytes < peak_flops / peak_bandwidth else "compute")
