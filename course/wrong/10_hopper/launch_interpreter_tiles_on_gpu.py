# selftest-replaces: hopper_launch
# selftest-must-fail: test_hopper_speed
# Mistake: the interpreter's tiles on the GPU too (32 × 16, one warp, no pipelining): correct everywhere, but
# far slower than the unit-08 kernel, so only the speed property (GPU-only) catches it.
# 错误：在 GPU 上也用解释器的小分块（32 × 16、一个 warp、不流水）：处处正确，但远慢于单元 08 的内核，
# 只有速度性质（仅 GPU）能发现。
@@ -7,4 +7,2 @@
-    # (BLOCK_Q, BLOCK_K, num_warps, num_stages): small tiles in the interpreter, H100-sized on a GPU
-    if utils.interpreter():
-        return 32, 16, 1, 1
-    return (128, 64, 4, 3) if d == 64 else (128, 64, 8, 3)
+    # (BLOCK_Q, BLOCK_K, num_warps, num_stages): small tiles, fine in the interpreter
+    return 32, 16, 1, 1
