# selftest-replaces: fa_backward_dkdv
# Variant: loads each query tile already transposed, (d, Bq), for Sᵀ = K Qᵀ, and uses its transpose for dK.
# / 变体：直接读入转置的查询分块 (d, Bq) 计算 Sᵀ = K Qᵀ，dK 用它的转置。
@@ -28,2 +28,2 @@
-        q = tl.load(q_ptr + batch * stride_qb + rows[:, None] * stride_qn + dims[None, :] * stride_qd,
-                    mask=row_ok[:, None], other=0.0)
+        qt = tl.load(q_ptr + batch * stride_qb + dims[:, None] * stride_qd + rows[None, :] * stride_qn,
+                     mask=row_ok[None, :], other=0.0)
@@ -34 +34 @@
-        st = tl.dot(k, tl.trans(q)) * scale  # Sᵀ, (BLOCK_K, BLOCK_Q): no tl.trans of a tl.dot result
+        st = tl.dot(k, qt) * scale  # Sᵀ, (BLOCK_K, BLOCK_Q): no tl.trans of a tl.dot result
@@ -42 +42 @@
-        dk += tl.dot(dst.to(q.dtype), q)
+        dk += tl.dot(dst.to(qt.dtype), tl.trans(qt))
