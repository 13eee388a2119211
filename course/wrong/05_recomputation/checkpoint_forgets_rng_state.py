# selftest-replaces: rc_checkpoint
# selftest-must-fail: test_checkpoint_gradients
# Mistake: recomputes without restoring the random state, so dropout draws new masks and the gradients belong
# to a different network than the forward pass.
# 错误：重计算时没有恢复随机数状态，dropout 抽到新的掩码，梯度对应的已经不是前向传播的那个网络。
@@ -7,2 +6,0 @@
-        ctx.cpu_state = torch.get_rng_state()
-        ctx.cuda_state = torch.cuda.get_rng_state(x.device) if x.is_cuda else None
@@ -20,3 +17,0 @@
-            torch.set_rng_state(ctx.cpu_state)
-            if ctx.cuda_state is not None:
-                torch.cuda.set_rng_state(ctx.cuda_state, x.device)
