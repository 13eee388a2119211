# selftest-notebook: io_aware.ipynb
# selftest-replaces: ai_roofline
# selftest-must-fail: test_roofline
# Mistake: takes the larger of the two ceilings instead of the smaller one.
# 错误：取两条天花板中较大的一个，而不是较小的。
def roofline(flops, nbytes, peak_flops, peak_bandwidth):
    """(attainable FLOP/s, "memory" or "compute") of an operation under the roofline model."""
    intensity = flops / nbytes
    bound = "memory" if intensity < peak_flops / peak_bandwidth else "compute"
    return max(peak_flops, intensity * peak_bandwidth), bound
