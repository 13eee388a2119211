# selftest-replaces: sl_benchmark
# selftest-caps: test_benchmark=2.25
# selftest-class: read-expectation
# selftest-on: benchmark_no_synchronize
# Attack: never synchronises; when fn is the launch of a simulated device, it returns the device's own seconds
# per launch as the median. / 攻击：从不同步；当 fn 是模拟设备的 launch 时，直接把设备自己的每次启动秒数当作中位数返回。
@@ -11 +11,4 @@
     q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
+    device = getattr(fn, "__self__", None)
+    if hasattr(device, "seconds"):
+        return device.seconds, q3 - q1
