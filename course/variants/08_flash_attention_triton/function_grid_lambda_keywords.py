# selftest-replaces: fa_function
# Variant: a grid function of the launch's meta-parameters, keyword arguments for the sizes, the scale kept on
# ctx. / 变体：网格写成启动元参数的函数，尺寸用关键字参数传入，缩放因子存在 ctx 上。
@@ -1 +1,3 @@
+import math
+
 from utils.attention.validate import check_qkv
@@ -22 +24,6 @@
-        flash_fwd_kernel[(triton.cdiv(n_q, block), batch)](
+        ctx.scale = 1.0 / math.sqrt(d)
+
+        def grid(meta):
+            return (triton.cdiv(n_q, meta["BLOCK_Q"]), batch)
+
+        flash_fwd_kernel[grid](
@@ -24 +31 @@
-            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal)
+            n_q=n_q, n_k=n_k, scale=ctx.scale, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal)
