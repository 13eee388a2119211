# selftest-replaces: rc_backward_lse
# selftest-must-fail: test_backward_lse, test_backward_lse_causal
# Mistake: computes everything in float32 and returns float32 gradients, whatever the inputs' dtype (bfloat16
# parameters would get float32 gradients; float64 inputs lose their precision).
# 错误：一律用 float32 计算并返回 float32 的梯度，不管输入是什么类型（bfloat16 参数会得到 float32 梯度，float64 输入丢了精度）。
@@ -17 +17 @@
-    return dQ.to(Q.dtype), dK.to(K.dtype), dV.to(V.dtype)
+    return dQ, dK, dV
