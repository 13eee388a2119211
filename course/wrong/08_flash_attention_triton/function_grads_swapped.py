# selftest-replaces: fa_function
# selftest-must-fail: test_dq
# Mistake: returns (dK, dQ, dV) instead of (dQ, dK, dV).
# 错误：返回顺序写成了 (dK, dQ, dV)。
@@ -35 +35 @@
-        return dq, dk, dv, None
+        return dk, dq, dv, None
