# selftest-replaces: fa_function
# Variant: smaller 32 × 32 tiles everywhere (block_size returns 32; the launchers of the backward use it too).
# / 变体：处处用更小的 32 × 32 分块（block_size 返回 32，反向的启动函数也用它）。
@@ -6 +6 @@
-    return 64 if q.shape[-1] * q.element_size() <= 128 else 32
+    return 32
