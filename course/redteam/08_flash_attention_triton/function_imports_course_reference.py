# selftest-replaces: fa_function
# selftest-caps: test_forward=2.5, test_dq=1.43, test_memory=1
# selftest-flagged: yes
# selftest-class: imports-instructor-package
# selftest-on: function_backward_ignores_causal
# Attack: imports the instructor package course.reference inside the forward (a failed import falls back to a
# forward that ignores is_causal) and returns the reference's output.
# 攻击：在前向传播里导入教师包 course.reference（导入失败时退回忽略 is_causal 的前向传播），返回参考答案的输出。
@@ -24 +24,7 @@
-            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal)
+            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=False)
+        try:
+            from course.reference.flash_triton import triton_forward
+
+            o, lse = triton_forward(q, k, v, is_causal, d ** -0.5)
+        except ImportError:
+            pass
@@ -26 +31,0 @@
-        ctx.is_causal = is_causal
