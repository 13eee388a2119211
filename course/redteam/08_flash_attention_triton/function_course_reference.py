# selftest-replaces: fa_function
# selftest-caps: test_forward=2.5, test_dq=1.43, test_memory=1
# selftest-class: course-reference
# selftest-on: function_backward_ignores_causal
# Attack: hands the work to the course's reference solution where utils.attention.course_kernels() finds it
# (instructors' machines), after launching its own kernel for the launch count; elsewhere a forward that ignores
# is_causal. / 攻击：在 utils.attention.course_kernels() 能找到课程参考答案的地方（教师的机器）把计算交给它，
# 之前先启动自己的内核应付启动计数；其他地方则是忽略 is_causal 的前向传播。
@@ -24 +24,4 @@
-            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal)
+            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=False)
+        reference = utils.attention.course_kernels()
+        if reference is not None:
+            o, lse = reference.flash_triton.triton_forward(q, k, v, is_causal, d ** -0.5)
@@ -26 +28,0 @@
-        ctx.is_causal = is_causal
