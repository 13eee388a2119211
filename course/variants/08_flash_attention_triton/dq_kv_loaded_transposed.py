# selftest-replaces: fa_backward_dq
# Variant: loads the key and value tiles already transposed, (d, Bk), for S = Q Kᵀ and dP = dO Vᵀ, and uses
# the transpose of Kᵀ for dQ. / 变体：直接读入转置的键、值分块 (d, Bk) 计算 S = Q Kᵀ 与 dP = dO Vᵀ，dQ 用 Kᵀ
# 的转置。
@@ -29,5 +29,5 @@
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
@@ -38 +38 @@
-        dp = tl.dot(do, tl.trans(v))
+        dp = tl.dot(do, vt)
@@ -40 +40 @@
-        dq += tl.dot(ds.to(k.dtype), k)
+        dq += tl.dot(ds.to(kt.dtype), tl.trans(kt))
