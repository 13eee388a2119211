# selftest-replaces: hopper_launch
# Variant: the base-2 score scale computed with math.log2(math.e) / math.sqrt(d).
# 变体：以 2 为底的分数缩放用 math.log2(math.e) / math.sqrt(d) 计算。
@@ -1,5 +1,5 @@
 from utils.attention.validate import check_qkv

-LOG2E = 1.4426950408889634
+import math


@@ -28,5 +28,5 @@
     hopper_fwd_kernel[(programs,)](
         descriptor(q, block_q), descriptor(k, block_k), descriptor(v, block_k), descriptor(out, block_q),
-        n_q, n_k, batch, d**-0.5 * LOG2E,
+        n_q, n_k, batch, math.log2(math.e) / math.sqrt(d),
         HEAD_DIM=d, BLOCK_Q=block_q, BLOCK_K=block_k, IS_CAUSAL=is_causal, num_warps=warps, num_stages=stages,
     )
