# selftest-replaces: fa_function
# selftest-caps: test_forward=2.5, test_dq=1.43, test_memory=1
# selftest-flagged: yes
# selftest-class: imports-instructor-package
# Attack: imports the instructor package course.reference inside the forward (a failed import falls back to a
# forward that ignores is_causal) and returns the reference's output.
# 攻击：在前向传播里导入教师包 course.reference（导入失败时退回忽略 is_causal 的前向传播），返回参考答案的输出。
@@ -22,7 +22,12 @@
         flash_fwd_kernel[(triton.cdiv(n_q, block), batch)](
             q, k, v, o, lse, *q.stride(), *k.stride(), *v.stride(), *o.stride(), *lse.stride(),
-            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal)
+            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=False)
+        try:
+            from course.reference.flash_triton import triton_forward
+
+            o, lse = triton_forward(q, k, v, is_causal, d ** -0.5)
+        except ImportError:
+            pass
         ctx.save_for_backward(q, k, v, o, lse)
-        ctx.is_causal = is_causal
         return o

@@ -31,5 +36,5 @@
         q, k, v, o, lse = ctx.saved_tensors
         delta = (grad_out.float() * o.float()).sum(-1)  # Δ = rowsum(dO ∘ O): float32, (B, Nq)
-        dk, dv = launch_dkdv(q, k, v, grad_out, lse, delta, ctx.is_causal)
-        dq = launch_dq(q, k, v, grad_out, lse, delta, ctx.is_causal)
+        dk, dv = launch_dkdv(q, k, v, grad_out, lse, delta, False)
+        dq = launch_dq(q, k, v, grad_out, lse, delta, False)
         return dq, dk, dv, None
