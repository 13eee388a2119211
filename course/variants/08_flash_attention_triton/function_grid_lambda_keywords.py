# selftest-replaces: fa_function
# Variant: a grid function of the launch's meta-parameters, keyword arguments for the sizes, the scale kept on
# ctx. / 变体：网格写成启动元参数的函数，尺寸用关键字参数传入，缩放因子存在 ctx 上。
@@ -1,2 +1,4 @@
+import math
+
 from utils.attention.validate import check_qkv

@@ -20,7 +22,12 @@
         o = torch.empty_like(q)
         lse = torch.empty(batch, n_q, device=q.device, dtype=torch.float32)
-        flash_fwd_kernel[(triton.cdiv(n_q, block), batch)](
+        ctx.scale = 1.0 / math.sqrt(d)
+
+        def grid(meta):
+            return (triton.cdiv(n_q, meta["BLOCK_Q"]), batch)
+
+        flash_fwd_kernel[grid](
             q, k, v, o, lse, *q.stride(), *k.stride(), *v.stride(), *o.stride(), *lse.stride(),
-            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal)
+            n_q=n_q, n_k=n_k, scale=ctx.scale, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal)
         ctx.save_for_backward(q, k, v, o, lse)
         ctx.is_causal = is_causal
