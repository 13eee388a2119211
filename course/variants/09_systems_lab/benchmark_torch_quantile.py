# selftest-notebook: systems_lab.ipynb
# selftest-replaces: sl_benchmark
# Variant: torch.quantile on a float64 tensor of samples. / 变体：对 float64 的样本张量用 torch.quantile。
def benchmark(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(reps):
        timing.synchronize()
        start = time.perf_counter()
        fn()
        timing.synchronize()
        samples.append(time.perf_counter() - start)
    q1, median, q3 = torch.quantile(torch.tensor(samples, dtype=torch.float64), torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64)).tolist()
    return median, q3 - q1
