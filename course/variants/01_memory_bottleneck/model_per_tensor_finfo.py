# selftest-replaces: memory_model
# Variant: one entry per tensor, element sizes from torch.finfo, the device compared as a torch.device.
# 变体：每个张量一项，元素大小来自 torch.finfo，设备用 torch.device 比较。
def attention_memory_bytes(batch, heads, n, d, dtype, training, device="cuda"):
    size = torch.finfo(dtype).bits // 8
    fp32 = torch.finfo(torch.float32).bits // 8
    nn, nd = batch * heads * n * n, batch * heads * n * d
    out = {name: nd * size for name in ("Q", "K", "V")}
    if training:
        out.update({name: nd * size for name in ("O", "dO", "dV")})
        out.update({"P (float32)": nn * fp32, "dP (float32)": nn * fp32, "dS (float32)": nn * fp32})
        if torch.device(device).type == "cuda":
            out["CUDA scratch"] = nn * fp32
        return out
    if size == fp32:
        out.update({"S": nn * size, "P": nn * size, "O": nd * size})
    else:
        out.update({"S": nn * size, "S (float32)": nn * fp32, "softmax (float32)": nn * fp32})
    return out
