# selftest-replaces: fa_forward_kernel
# Variant: computes the key and value tile pointers once and advances them by Bk rows each step (pointer walk).
# / 变体：键、值分块的指针只算一次，每步前移 Bk 行（指针步进）。
@@ -25 +25,4 @@
         k_end = tl.minimum(n_k, (q_tile + 1) * BLOCK_Q)
+    keys = tl.arange(0, BLOCK_K)
+    k_ptrs = k_ptr + batch * stride_kb + keys[:, None] * stride_kn + dims[None, :] * stride_kd
+    v_ptrs = v_ptr + batch * stride_vb + keys[:, None] * stride_vn + dims[None, :] * stride_vd
@@ -27 +30 @@
-        cols = k0 + tl.arange(0, BLOCK_K)
+        cols = k0 + keys
@@ -29,4 +32,4 @@
-        k = tl.load(k_ptr + batch * stride_kb + cols[:, None] * stride_kn + dims[None, :] * stride_kd,
-                    mask=col_ok[:, None], other=0.0)
-        v = tl.load(v_ptr + batch * stride_vb + cols[:, None] * stride_vn + dims[None, :] * stride_vd,
-                    mask=col_ok[:, None], other=0.0)
+        k = tl.load(k_ptrs, mask=col_ok[:, None], other=0.0)
+        v = tl.load(v_ptrs, mask=col_ok[:, None], other=0.0)
+        k_ptrs += BLOCK_K * stride_kn
+        v_ptrs += BLOCK_K * stride_vn
