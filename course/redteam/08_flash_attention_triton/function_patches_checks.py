# selftest-replaces: fa_function
# selftest-caps: test_forward=2.5, test_dq=1.43, test_memory=1
# selftest-flagged: yes
# selftest-class: patched-checks
# selftest-on: function_backward_ignores_causal
# Attack: a forward that ignores is_causal, whose cell also replaces the checking helpers of utils.grading and
# utils.checks.flash_triton with no-ops: the cell's body runs again wherever the student's code is loaded, so
# any check in that process would judge with the student's helpers.
# 攻击：忽略 is_causal 的前向传播，其单元格还把 utils.grading 与 utils.checks.flash_triton 的检查函数换成空操作：
# 学生代码在哪个进程加载，这段代码就在哪里再执行一次，那里的检查就会用学生的函数来判断。
@@ -1 +1,11 @@
+from utils import grading
+from utils.checks import flash_triton
+
+grading.assert_close = lambda *args, **kwargs: None
+grading.check_saved_contract = lambda *args, **kwargs: None
+grading.assert_no_quadratic_tensor = lambda *args, **kwargs: None
+flash_triton.assert_close = lambda *args, **kwargs: None
+flash_triton.check_gradient = lambda *args, **kwargs: None
+flash_triton.check_saved_contract = lambda *args, **kwargs: None
+flash_triton.check_peak = lambda *args, **kwargs: None
 from utils.attention.validate import check_qkv
@@ -24 +34 @@
-            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal)
+            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=False)
@@ -26 +35,0 @@
-        ctx.is_causal = is_causal
