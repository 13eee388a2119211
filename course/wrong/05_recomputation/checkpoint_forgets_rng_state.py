# selftest-notebook: recomputation.ipynb
# selftest-replaces: rc_checkpoint
# selftest-must-fail: test_checkpoint_gradients
# Mistake: recomputes without restoring the random state, so dropout draws new masks and the gradients belong
# to a different network than the forward pass.
# 错误：重算时没有恢复随机数状态，dropout 抽到新的掩码，梯度对应的已经不是前向传播的那个网络。
@@ -1,10 +1,6 @@
 class SegmentFunction(torch.autograd.Function):
-    """One checkpointed segment: apply(layers, x, *params) keeps only x; backward runs the segment again."""
-
     @staticmethod
     def forward(ctx, layers, x, *params):
         ctx.layers = layers
-        ctx.cpu_state = torch.get_rng_state()
-        ctx.cuda_state = torch.cuda.get_rng_state(x.device) if x.is_cuda else None
         ctx.save_for_backward(x)
         for layer in layers:
@@ -17,20 +13,15 @@
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
