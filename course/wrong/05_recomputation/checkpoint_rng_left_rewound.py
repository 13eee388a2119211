# selftest-replaces: rc_checkpoint
# selftest-must-fail: test_checkpoint_gradients
# Mistake: restores the random state for the recomputation but never puts the generator back, so the random
# numbers drawn after backward repeat earlier ones (the next step's dropout masks would repeat).
# 错误：重计算时恢复了随机数状态，事后却没有把生成器放回原处，反向传播之后抽到的随机数重复了之前的（下一步的 dropout 掩码会重复）。
@@ -19,8 +19,7 @@
-        with torch.random.fork_rng(devices=[x.device] if x.is_cuda else []):
-            torch.set_rng_state(ctx.cpu_state)
-            if ctx.cuda_state is not None:
-                torch.cuda.set_rng_state(ctx.cuda_state, x.device)
-            with torch.enable_grad():
-                out = x
-                for layer in ctx.layers:
-                    out = layer(out)
+        torch.set_rng_state(ctx.cpu_state)
+        if ctx.cuda_state is not None:
+            torch.cuda.set_rng_state(ctx.cuda_state, x.device)
+        with torch.enable_grad():
+            out = x
+            for layer in ctx.layers:
+                out = layer(out)
