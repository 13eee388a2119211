# selftest-replaces: ai_roofline
# Variant: the time model: the operation takes max(FLOPs/peak, bytes/bandwidth); compute-bound when the FLOP time is the longer. / 变体：时间模型：取计算时间和搬运时间中较长者。
def roofline(flops, nbytes, peak_flops, peak_bandwidth):
    compute_time, memory_time = flops / peak_flops, nbytes / peak_bandwidth
    bound = "compute" if compute_time >= memory_time else "memory"
    if bound == "compute":
        return float(peak_flops), bound
    return flops / memory_time, bound
