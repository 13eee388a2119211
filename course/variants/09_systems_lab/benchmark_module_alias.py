# selftest-replaces: sl_benchmark
# Variant: synchronize imported under another name, a timer class, the three quartiles unpacked. / 变体：以别名导入 synchronize，计时器类，三个四分位数一起解包。
from time import perf_counter as clock

from utils.timing import synchronize as wait_for_device


class Stopwatch:
    def __enter__(self):
        wait_for_device()
        self.start = clock()
        return self

    def __exit__(self, *exc):
        wait_for_device()
        self.seconds = clock() - self.start


def benchmark(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(reps):
        with Stopwatch() as watch:
            fn()
        samples.append(watch.seconds)
    if reps == 1:
        return samples[0], 0.0
    q1, q2, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return statistics.median(samples), q3 - q1
