# selftest-replaces: fa_function
# selftest-must-fail: test_autograd_function
# Mistake: backward returns three gradients; autograd needs one per forward input, None for is_causal.
# 错误：backward 只返回三个梯度；autograd 要求每个输入一个，is_causal 对应 None。
@@ -15 +15 @@
-        return dQ, dK, dV, None
+        return dQ, dK, dV
