# selftest-replaces: fa_forward_kernel
# Variant: loads each key tile already transposed, as a (d, Bk) block read through K's strides, so the scores
# are tl.dot(q, kᵀ) without tl.trans. / 变体：按 K 的步长直接读入转置的键分块 (d, Bk)，分数为 tl.dot(q, kᵀ)，
# 不用 tl.trans。
@@ -29,2 +29,2 @@
-        k = tl.load(k_ptr + batch * stride_kb + cols[:, None] * stride_kn + dims[None, :] * stride_kd,
-                    mask=col_ok[:, None], other=0.0)
+        kt = tl.load(k_ptr + batch * stride_kb + dims[:, None] * stride_kd + cols[None, :] * stride_kn,
+                     mask=col_ok[None, :], other=0.0)
@@ -33 +33 @@
-        s = tl.dot(q, tl.trans(k)) * scale
+        s = tl.dot(q, kt) * scale
