# selftest-notebook: systems_lab.ipynb
# selftest-replaces: sl_benchmark
# selftest-caps: test_benchmark=1.8
# selftest-class: rewritten-counters
# selftest-whole: a different program, not the reference with a change
# Attack: calls fn once more after timing, then takes that call back off the workload's call counter and the
# device's launch counter. / 攻击：计时后多调用一次 fn，再从工作负载的调用计数和设备的启动计数中减掉这一次。
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
    fn()
    timing.synchronize()
    if hasattr(fn, "calls"):
        fn.calls -= 1
    device = getattr(fn, "__self__", None)
    if hasattr(device, "launches"):
        device.launches -= 1
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return statistics.median(samples), q3 - q1
