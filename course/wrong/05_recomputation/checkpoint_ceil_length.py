# selftest-replaces: rc_checkpoint
# selftest-must-fail: test_checkpoint_gradients
# selftest-selfcheck-fails: test_checkpoint_gradients
# Mistake: takes ⌈len(layers) / segments⌉ layers per segment: there may be fewer segments than asked, and the last
# one may be short (the gradients are still right).
# 错误：每段取 ⌈len(layers) / segments⌉ 层：段数可能比要求的少，最后一段可能很短（梯度仍
# 然正确）。
@@ -36,5 +36,3 @@
-    size, extra = divmod(len(layers), segments)
-    start = 0
-    for j in range(segments):
-        part = layers[start : start + size + (j < extra)]
-        start += len(part)
+    size = -(-len(layers) // segments)
+    for start in range(0, len(layers), size):
+        part = layers[start : start + size]
