# selftest-replaces: fa_forward_kernel
# selftest-must-fail: test_forward
# Mistake: computes addresses as if Q, K, V were contiguous (row · d + column) instead of using their strides.
# 错误：按连续张量计算地址（行 · d + 列），没有使用步长。
@@ -15,5 +15,5 @@
     dims = tl.arange(0, HEAD_DIM)
     row_ok = rows < n_q
-    q = tl.load(q_ptr + batch * stride_qb + rows[:, None] * stride_qn + dims[None, :] * stride_qd,
+    q = tl.load(q_ptr + (batch * n_q + rows[:, None]) * HEAD_DIM + dims[None, :],
                 mask=row_ok[:, None], other=0.0)

@@ -27,7 +27,7 @@
         cols = k0 + tl.arange(0, BLOCK_K)
         col_ok = cols < n_k
-        k = tl.load(k_ptr + batch * stride_kb + cols[:, None] * stride_kn + dims[None, :] * stride_kd,
+        k = tl.load(k_ptr + (batch * n_k + cols[:, None]) * HEAD_DIM + dims[None, :],
                     mask=col_ok[:, None], other=0.0)
-        v = tl.load(v_ptr + batch * stride_vb + cols[:, None] * stride_vn + dims[None, :] * stride_vd,
+        v = tl.load(v_ptr + (batch * n_k + cols[:, None]) * HEAD_DIM + dims[None, :],
                     mask=col_ok[:, None], other=0.0)
         s = tl.dot(q, tl.trans(k)) * scale
