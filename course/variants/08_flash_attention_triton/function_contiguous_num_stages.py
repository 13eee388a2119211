# selftest-replaces: fa_function
# Variant: makes Q, K, V contiguous before launching (a copy only for strided views; the copies are what it
# saves) and sets num_warps and num_stages. / 变体：启动前把 Q、K、V 变为连续（只有跨步视图才复制，保存的
# 就是副本），并设置 num_warps 与 num_stages。
@@ -16 +16,2 @@
                 f"expected (B, N, d) float16/bfloat16/float32 tensors, got {tuple(q.shape)} {q.dtype}"))
+        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
@@ -24 +25,2 @@
-            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal)
+            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal,
+            num_warps=4, num_stages=2)
