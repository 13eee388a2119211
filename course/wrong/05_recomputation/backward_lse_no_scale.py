# selftest-replaces: rc_backward_lse
# selftest-must-fail: test_backward_lse, test_backward_lse_causal
# Mistake: forgets the chain-rule factor σ = 1/√d in dQ and dK (S = σ Q Kᵀ).
# 错误：dQ 和 dK 中漏掉了链式法则带来的因子 σ = 1/√d（S = σ Q Kᵀ）。
@@ -14,4 +14,5 @@
-    dQ = scale * d_s @ k
-    dK = scale * d_s.transpose(-2, -1) @ q
-    dV = p.transpose(-2, -1) @ d_out
-    return dQ.to(Q.dtype), dK.to(K.dtype), dV.to(V.dtype)
+    return (
+        (d_s @ k).to(Q.dtype),
+        (d_s.transpose(-2, -1) @ q).to(K.dtype),
+        (p.transpose(-2, -1) @ d_out).to(V.dtype),
+    )
