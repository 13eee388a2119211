# selftest-replaces: fa_backward_dq
# Variant: loads the key and value tiles already transposed, (d, Bk), for S = Q Kᵀ and dP = dO Vᵀ, and uses
# the transpose of Kᵀ for dQ. / 变体：直接读入转置的键、值分块 (d, Bk) 计算 S = Q Kᵀ 与 dP = dO Vᵀ，dQ 用 Kᵀ
# 的转置。
@@ -27,16 +27,16 @@
         cols = k0 + tl.arange(0, BLOCK_K)
         col_ok = cols < n_k
-        k = tl.load(k_ptr + batch * stride_kb + cols[:, None] * stride_kn + dims[None, :] * stride_kd,
-                    mask=col_ok[:, None], other=0.0)
-        v = tl.load(v_ptr + batch * stride_vb + cols[:, None] * stride_vn + dims[None, :] * stride_vd,
-                    mask=col_ok[:, None], other=0.0)
-        s = tl.dot(q, tl.trans(k)) * scale
+        kt = tl.load(k_ptr + batch * stride_kb + dims[:, None] * stride_kd + cols[None, :] * stride_kn,
+                     mask=col_ok[None, :], other=0.0)
+        vt = tl.load(v_ptr + batch * stride_vb + dims[:, None] * stride_vd + cols[None, :] * stride_vn,
+                     mask=col_ok[None, :], other=0.0)
+        s = tl.dot(q, kt) * scale
         visible = row_ok[:, None] & col_ok[None, :]
         if IS_CAUSAL:
             visible = visible & (cols[None, :] <= rows[:, None])
         p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
-        dp = tl.dot(do, tl.trans(v))
+        dp = tl.dot(do, vt)
         ds = p * (dp - delta[:, None])
-        dq += tl.dot(ds.to(k.dtype), k)
+        dq += tl.dot(ds.to(kt.dtype), tl.trans(kt))
     dq = dq * scale
     tl.store(dq_ptr + batch * stride_dqb + rows[:, None] * stride_dqn + dims[None, :] * stride_dqd,
