# selftest-replaces: rc_checkpoint
# selftest-must-fail: test_checkpoint_gradients
# Mistake: cuts `segments` pieces of len(layers) // segments layers and forgets the remainder: when the layers do
# not divide evenly, the last layers never run.
# 错误：切出 `segments` 段、每段 len(layers) // segments 层，忘了余数：层数不能整除时，最后几层根本没有运行。
@@ -27,4 +27,4 @@
-        wanted = ([x] if x.requires_grad else []) + [p for p in params if p.requires_grad]
-        grads = iter(torch.autograd.grad(out, wanted, grad_out, allow_unused=True))
-        grad_x = next(grads) if x.requires_grad else None
-        return None, grad_x, *[next(grads) if p.requires_grad else None for p in params]
+        wanted = ([x] if x.requires_grad else []) + params
+        grads = list(torch.autograd.grad(out, wanted, grad_out, allow_unused=True))
+        grad_x = grads.pop(0) if x.requires_grad else None
+        return None, grad_x, *grads
@@ -36,2 +36 @@
-    size, extra = divmod(len(layers), segments)
-    start = 0
+    size = len(layers) // segments
@@ -39,2 +38 @@
-        part = layers[start : start + size + (j < extra)]
-        start += len(part)
+        part = layers[j * size : (j + 1) * size]
