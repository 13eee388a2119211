# selftest-replaces: fa_backward_dkdv
# Variant: advances the Q, dO, L and Δ pointers by Bq rows each step and applies the scale in the store.
# / 变体：每步把 Q、dO、L、Δ 的指针前移 Bq 行，缩放在存储时完成。
@@ -24 +24,6 @@
         q_start = (k_tile * BLOCK_K // BLOCK_Q) * BLOCK_Q
+    first = q_start + tl.arange(0, BLOCK_Q)
+    q_ptrs = q_ptr + batch * stride_qb + first[:, None] * stride_qn + dims[None, :] * stride_qd
+    do_ptrs = do_ptr + batch * stride_dob + first[:, None] * stride_don + dims[None, :] * stride_dod
+    lse_ptrs = lse_ptr + batch * stride_lb + first * stride_ln
+    delta_ptrs = delta_ptr + batch * stride_deltab + first * stride_deltan
@@ -28,6 +33,8 @@
-        q = tl.load(q_ptr + batch * stride_qb + rows[:, None] * stride_qn + dims[None, :] * stride_qd,
-                    mask=row_ok[:, None], other=0.0)
-        do = tl.load(do_ptr + batch * stride_dob + rows[:, None] * stride_don + dims[None, :] * stride_dod,
-                     mask=row_ok[:, None], other=0.0)
-        lse = tl.load(lse_ptr + batch * stride_lb + rows * stride_ln, mask=row_ok, other=0.0)
-        delta = tl.load(delta_ptr + batch * stride_deltab + rows * stride_deltan, mask=row_ok, other=0.0)
+        q = tl.load(q_ptrs, mask=row_ok[:, None], other=0.0)
+        do = tl.load(do_ptrs, mask=row_ok[:, None], other=0.0)
+        lse = tl.load(lse_ptrs, mask=row_ok, other=0.0)
+        delta = tl.load(delta_ptrs, mask=row_ok, other=0.0)
+        q_ptrs += BLOCK_Q * stride_qn
+        do_ptrs += BLOCK_Q * stride_don
+        lse_ptrs += BLOCK_Q * stride_ln
+        delta_ptrs += BLOCK_Q * stride_deltan
@@ -43 +49,0 @@
-    dk = dk * scale
@@ -45 +51 @@
-             dk.to(dk_ptr.dtype.element_ty), mask=col_ok[:, None])
+             (dk * scale).to(dk_ptr.dtype.element_ty), mask=col_ok[:, None])
