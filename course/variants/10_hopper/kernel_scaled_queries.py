# selftest-replaces: hopper_kernel
# Variant: the score scale folded into Q once per tile instead of into every score tile.
# 变体：分数缩放在每个查询分块上乘一次，而不是乘在每个分数块上。
@@ -7 +7 @@
-    s = tl.dot(q, tl.trans(k)) * qk_scale
+    s = tl.dot(q, tl.trans(k))
@@ -32 +32,2 @@
         q = q_desc.load([b, q_start, 0]).reshape([BLOCK_Q, HEAD_DIM])
+        q = (q * qk_scale).to(q_desc.dtype)  # the scale folded into Q once per tile
