# selftest-replaces: sl_benchmark
# selftest-caps: test_benchmark=1.8
# selftest-class: rewritten-counters
# Attack: calls fn once more after timing, then takes that call back off the workload's call counter and the
# device's launch counter. / 攻击：计时后多调用一次 fn，再从工作负载的调用计数和设备的启动计数中减掉这一次。
@@ -10 +10,8 @@
         samples.append(time.perf_counter() - start)
+    fn()
+    timing.synchronize()
+    if hasattr(fn, "calls"):
+        fn.calls -= 1
+    device = getattr(fn, "__self__", None)
+    if hasattr(device, "launches"):
+        device.launches -= 1
