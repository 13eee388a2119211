# selftest-replaces: ai_roofline
# Variant: the ridge computed first, then one branch per side. / 变体：先算拐点，两边各一个分支。
def roofline(flops, nbytes, peak_flops, peak_bandwidth):
    ridge = peak_flops / peak_bandwidth
    intensity = flops / nbytes
    if intensity >= ridge:
        return peak_flops, "compute"
    return intensity * peak_bandwidth, "memory"
