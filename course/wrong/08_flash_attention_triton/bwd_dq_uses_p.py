# selftest-replaces: fa_backward_dq
# selftest-must-fail: test_dq
# Mistake: accumulates dQ from P instead of dS.
# 错误：dQ 用 P 而不是 dS 累加。
@@ -40 +40 @@
-        dq += tl.dot(ds.to(k.dtype), k)
+        dq += tl.dot(p.to(k.dtype), k)
