# selftest-replaces: rc_checkpoint
# selftest-must-fail: test_checkpoint_gradients
# Mistake: cuts `segments` pieces of len(layers) // segments layers and forgets the remainder: when the layers do
# not divide evenly, the last layers never run.
# 错误：切出 `segments` 段、每段 len(layers) // segments 层，忘了余数：层数不能整除时，最后几层根本没有运行。
@@ -36,2 +36 @@
-    size, extra = divmod(len(layers), segments)
-    start = 0
+    size = len(layers) // segments
@@ -39,2 +38 @@
-        part = layers[start : start + size + (j < extra)]
-        start += len(part)
+        part = layers[j * size : (j + 1) * size]
