# selftest-replaces: ai_roofline
# Variant: float64 tensors and .item(); the bound from comparing the memory roof with the peak. / 变体：用 float64 张量计算，再 .item()。
def roofline(flops, nbytes, peak_flops, peak_bandwidth):
    intensity = torch.tensor(flops, dtype=torch.float64) / nbytes
    memory_roof = intensity * peak_bandwidth
    attainable = torch.minimum(memory_roof, torch.tensor(peak_flops, dtype=torch.float64)).item()
    return attainable, "memory" if (intensity < peak_flops / peak_bandwidth).item() else "compute"
