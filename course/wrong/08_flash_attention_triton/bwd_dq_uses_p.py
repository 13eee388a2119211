# selftest-replaces: fa_backward_dq
# selftest-must-fail: test_dq
# Mistake: accumulates dQ from P instead of dS.
# 错误：dQ 用 P 而不是 dS 累加。
@@ -38,5 +38,5 @@
         dp = tl.dot(do, tl.trans(v))
         ds = p * (dp - delta[:, None])
-        dq += tl.dot(ds.to(k.dtype), k)
+        dq += tl.dot(p.to(k.dtype), k)
     dq = dq * scale
     tl.store(dq_ptr + batch * stride_dqb + rows[:, None] * stride_dqn + dims[None, :] * stride_dqd,
