# selftest-notebook: recomputation.ipynb
# selftest-replaces: rc_checkpoint
# selftest-must-fail: test_checkpoint_gradients
# Mistake: restores the random state for the recomputation but never puts the generator back, so the random
# numbers drawn after backward repeat earlier ones (the next step's dropout masks would repeat).
# 错误：重算时恢复了随机数状态，事后却没有把生成器放回原处，反向传播之后抽到的随机数重复了之前的（下一步的 dropout 掩码会重复）。
@@ -1,5 +1,3 @@
 class SegmentFunction(torch.autograd.Function):
-    """One checkpointed segment: apply(layers, x, *params) keeps only x; backward runs the segment again."""
-
     @staticmethod
     def forward(ctx, layers, x, *params):
@@ -17,20 +15,18 @@
         params = [p for layer in ctx.layers for p in layer.parameters()]
         x = x.detach().requires_grad_(ctx.needs_input_grad[1])
-        with torch.random.fork_rng(devices=[x.device] if x.is_cuda else []):
-            torch.set_rng_state(ctx.cpu_state)
-            if ctx.cuda_state is not None:
-                torch.cuda.set_rng_state(ctx.cuda_state, x.device)
-            with torch.enable_grad():
-                out = x
-                for layer in ctx.layers:
-                    out = layer(out)
-        wanted = ([x] if x.requires_grad else []) + [p for p in params if p.requires_grad]
-        grads = iter(torch.autograd.grad(out, wanted, grad_out, allow_unused=True))
-        grad_x = next(grads) if x.requires_grad else None
-        return None, grad_x, *[next(grads) if p.requires_grad else None for p in params]
+        torch.set_rng_state(ctx.cpu_state)
+        if ctx.cuda_state is not None:
+            torch.cuda.set_rng_state(ctx.cuda_state, x.device)
+        with torch.enable_grad():
+            out = x
+            for layer in ctx.layers:
+                out = layer(out)
+        wanted = ([x] if x.requires_grad else []) + params
+        grads = list(torch.autograd.grad(out, wanted, grad_out, allow_unused=True))
+        grad_x = grads.pop(0) if x.requires_grad else None
+        return None, grad_x, *grads


 def checkpointed_forward(layers, x, segments):
-    """Apply `layers` in order to x, keeping only each of `segments` segments' input for backward."""
     layers = list(layers)
     size, extra = divmod(len(layers), segments)
