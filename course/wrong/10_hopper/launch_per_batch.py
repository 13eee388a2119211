# selftest-replaces: hopper_launch
# selftest-must-fail: test_hopper
# Mistake: one launch per batch entry (each small enough, but B launches instead of one persistent grid).
# 错误：每个批元素启动一次（每次都不大，但启动了 B 次，而不是一个持久网格）。
@@ -27,6 +27,8 @@
-    programs = min(utils.hopper.num_sms(), batch * triton.cdiv(n_q, block_q))
-    hopper_fwd_kernel[(programs,)](
-        descriptor(q, block_q), descriptor(k, block_k), descriptor(v, block_k), descriptor(out, block_q),
-        n_q, n_k, batch, d**-0.5 * LOG2E,
-        HEAD_DIM=d, BLOCK_Q=block_q, BLOCK_K=block_k, IS_CAUSAL=is_causal, num_warps=warps, num_stages=stages,
-    )
+    for i in range(batch):  # one launch per batch entry
+        qi, ki, vi, oi = (t[i : i + 1] for t in (q, k, v, out))
+        programs = min(utils.hopper.num_sms(), triton.cdiv(n_q, block_q))
+        hopper_fwd_kernel[(programs,)](
+            descriptor(qi, block_q), descriptor(ki, block_k), descriptor(vi, block_k), descriptor(oi, block_q),
+            n_q, n_k, 1, d**-0.5 * LOG2E,
+            HEAD_DIM=d, BLOCK_Q=block_q, BLOCK_K=block_k, IS_CAUSAL=is_causal, num_warps=warps, num_stages=stages,
+        )
