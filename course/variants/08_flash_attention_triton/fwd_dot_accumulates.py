# selftest-replaces: fa_forward_kernel
# Variant: tl.dot accumulates into the rescaled output (tl.dot(p, v, acc · α)) and the output is multiplied by
# 1/ℓ. / 变体：tl.dot 直接累加到重新缩放的输出上（tl.dot(p, v, acc · α)），输出乘以 1/ℓ。
@@ -40,8 +40,8 @@
         p = tl.exp(s - m_new[:, None])
         total = total * alpha + tl.sum(p, axis=1)
-        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
+        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
         m = m_new

-    o = acc / total[:, None]
+    o = acc * (1.0 / total)[:, None]
     tl.store(o_ptr + batch * stride_ob + rows[:, None] * stride_on + dims[None, :] * stride_od,
              o.to(o_ptr.dtype.element_ty), mask=row_ok[:, None])
