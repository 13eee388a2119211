# selftest-replaces: fused_softmax
# selftest-must-fail: test_fused_softmax
# Mistake: writes the unnormalised exponentials to P, then reads P back to divide by the row sum (P written twice).
# 错误：先把未归一化的指数写进 P，再把 P 读回来除以行和（P 写了两次）。
@@ -16 +16,3 @@
-            mem["P"][b, r0:r1] = torch.softmax(s, dim=-1)
+            e = torch.exp(s - s.amax(dim=-1, keepdim=True))
+            mem["P"][b, r0:r1] = e
+            mem["P"][b, r0:r1] = mem["P"][b, r0:r1].to(compute) / e.sum(dim=-1, keepdim=True)
