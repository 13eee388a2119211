# selftest-replaces: fa_forward_kernel
# selftest-must-fail: test_forward
# Mistake: computes addresses as if Q, K, V were contiguous (row · d + column) instead of using their strides.
# 错误：按连续张量计算地址（行 · d + 列），没有使用步长。
@@ -17 +17 @@
-    q = tl.load(q_ptr + batch * stride_qb + rows[:, None] * stride_qn + dims[None, :] * stride_qd,
+    q = tl.load(q_ptr + (batch * n_q + rows[:, None]) * HEAD_DIM + dims[None, :],
@@ -29 +29 @@
-        k = tl.load(k_ptr + batch * stride_kb + cols[:, None] * stride_kn + dims[None, :] * stride_kd,
+        k = tl.load(k_ptr + (batch * n_k + cols[:, None]) * HEAD_DIM + dims[None, :],
@@ -31 +31 @@
-        v = tl.load(v_ptr + batch * stride_vb + cols[:, None] * stride_vn + dims[None, :] * stride_vd,
+        v = tl.load(v_ptr + (batch * n_k + cols[:, None]) * HEAD_DIM + dims[None, :],
