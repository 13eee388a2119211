# selftest-replaces: rc_backward_lse
# selftest-must-fail: test_backward_lse_causal
# Mistake: aligns the causal mask bottom-right (query i sees keys j ≤ i + Nk − Nq), the convention of some
# libraries, not the course's top-left one: right for Nq = Nk only.
# 错误：因果掩码右下角对齐（查询 i 看键 j ≤ i + Nk − Nq），这是某些库的约定，不是本课程的左上角对齐：只在 Nq = Nk 时正确。
@@ -8 +8 @@
-        rows = torch.arange(Q.shape[-2], device=Q.device)[:, None]
+        rows = torch.arange(Q.shape[-2], device=Q.device)[:, None] + (K.shape[-2] - Q.shape[-2])
