# selftest-replaces: fa_forward_kernel
# Variant: tl.dot accumulates into the rescaled output (tl.dot(p, v, acc · α)) and the output is multiplied by
# 1/ℓ. / 变体：tl.dot 直接累加到重新缩放的输出上（tl.dot(p, v, acc · α)），输出乘以 1/ℓ。
@@ -42 +42 @@
-        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
+        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
@@ -45 +45 @@
-    o = acc / total[:, None]
+    o = acc * (1.0 / total)[:, None]
