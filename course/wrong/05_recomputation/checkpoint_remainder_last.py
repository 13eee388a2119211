# selftest-replaces: rc_checkpoint
# selftest-must-fail: test_checkpoint_gradients
# selftest-selfcheck-fails: test_checkpoint_gradients
# Mistake: splits as checkpoint_sequential does: len(layers) // segments layers per segment and the whole remainder
# in the last one, so lengths may differ by more than one (the gradients are still right).
# 错误：像 checkpoint_sequential 那样切段：前面每段 len(layers) // segm
# ents 层，余数全部放进最后一段，长度可能相差不止 1（梯度仍然正确）。
@@ -36,2 +36 @@
-    size, extra = divmod(len(layers), segments)
-    start = 0
+    size = len(layers) // segments
@@ -39,2 +38 @@
-        part = layers[start : start + size + (j < extra)]
-        start += len(part)
+        part = layers[j * size : (j + 1) * size if j < segments - 1 else len(layers)]
