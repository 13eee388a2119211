# selftest-replaces: fa_backward_dkdv
# Variant: loads each query tile already transposed, (d, Bq), for Sᵀ = K Qᵀ, and uses its transpose for dK.
# / 变体：直接读入转置的查询分块 (d, Bq) 计算 Sᵀ = K Qᵀ，dK 用它的转置。
@@ -26,11 +26,11 @@
         rows = q0 + tl.arange(0, BLOCK_Q)
         row_ok = rows < n_q
-        q = tl.load(q_ptr + batch * stride_qb + rows[:, None] * stride_qn + dims[None, :] * stride_qd,
-                    mask=row_ok[:, None], other=0.0)
+        qt = tl.load(q_ptr + batch * stride_qb + dims[:, None] * stride_qd + rows[None, :] * stride_qn,
+                     mask=row_ok[None, :], other=0.0)
         do = tl.load(do_ptr + batch * stride_dob + rows[:, None] * stride_don + dims[None, :] * stride_dod,
                      mask=row_ok[:, None], other=0.0)
         lse = tl.load(lse_ptr + batch * stride_lb + rows * stride_ln, mask=row_ok, other=0.0)
         delta = tl.load(delta_ptr + batch * stride_deltab + rows * stride_deltan, mask=row_ok, other=0.0)
-        st = tl.dot(k, tl.trans(q)) * scale  # Sᵀ, (BLOCK_K, BLOCK_Q): no tl.trans of a tl.dot result
+        st = tl.dot(k, qt) * scale  # Sᵀ, (BLOCK_K, BLOCK_Q): no tl.trans of a tl.dot result
         visible = col_ok[:, None] & row_ok[None, :]
         if IS_CAUSAL:
@@ -40,5 +40,5 @@
         dpt = tl.dot(v, tl.trans(do))
         dst = pt * (dpt - delta[None, :])
-        dk += tl.dot(dst.to(q.dtype), q)
+        dk += tl.dot(dst.to(qt.dtype), tl.trans(qt))
     dk = dk * scale
     tl.store(dk_ptr + batch * stride_dkb + cols[:, None] * stride_dkn + dims[None, :] * stride_dkd,
