# selftest-replaces: sl_benchmark
# selftest-caps: test_benchmark=0
# selftest-class: read-expectation
# selftest-whole: times CPU time and returns the workload's durations: the patch is longer than the cell
# Attack: times with time.process_time() (CPU time: sleeping costs none), but when fn carries its durations it
# returns their median and quartiles instead. / 攻击：用 time.process_time() 计时（CPU 时间：睡眠不计），
# 但当 fn 带着自己的时长时，直接返回这些时长的中位数和四分位距。
def benchmark(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(reps):
        timing.synchronize()
        start = time.process_time()
        fn()
        timing.synchronize()
        samples.append(time.process_time() - start)
    if hasattr(fn, "durations"):
        durations = fn.durations + [fn.durations[-1]] * (warmup + reps)
        samples = durations[warmup : warmup + reps]
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return statistics.median(samples), q3 - q1
