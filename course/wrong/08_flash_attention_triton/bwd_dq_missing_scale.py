# selftest-replaces: fa_backward_dq
# selftest-must-fail: test_dq
# Mistake: forgets the softmax scale σ = 1/√d in dQ.
# 错误：dQ 忘了乘 softmax 缩放因子 σ = 1/√d。
@@ -39,5 +39,4 @@
         ds = p * (dp - delta[:, None])
         dq += tl.dot(ds.to(k.dtype), k)
-    dq = dq * scale
     tl.store(dq_ptr + batch * stride_dqb + rows[:, None] * stride_dqn + dims[None, :] * stride_dqd,
              dq.to(dq_ptr.dtype.element_ty), mask=row_ok[:, None])
