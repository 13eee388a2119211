# selftest-replaces: rc_checkpoint
# selftest-must-fail: test_checkpoint_gradients
# Mistake: the reentrant design: the segment joins the graph only through x and backpropagates the parameters
# inside backward, so when x needs no gradient the output needs none and the parameters get nothing.
# 错误：可重入的做法：每段只通过 x 接入计算图，在 backward 里面反传参数；x 不需要梯度时输出也不需要，参数得不到梯度。
@@ -5 +5 @@
-    def forward(ctx, layers, x, *params):
+    def forward(ctx, layers, x):
@@ -17,2 +17 @@
-        params = [p for layer in ctx.layers for p in layer.parameters()]
-        x = x.detach().requires_grad_(ctx.needs_input_grad[1])
+        x = x.detach().requires_grad_(True)
@@ -27,4 +26,2 @@
-        wanted = ([x] if x.requires_grad else []) + [p for p in params if p.requires_grad]
-        grads = iter(torch.autograd.grad(out, wanted, grad_out, allow_unused=True))
-        grad_x = next(grads) if x.requires_grad else None
-        return None, grad_x, *[next(grads) if p.requires_grad else None for p in params]
+        torch.autograd.backward(out, grad_out)
+        return None, x.grad
@@ -41 +38 @@
-        x = SegmentFunction.apply(part, x, *[p for layer in part for p in layer.parameters()])
+        x = SegmentFunction.apply(part, x)
