# selftest-replaces: standard_attention
# selftest-must-fail: test_standard_attention
# Mistake: computes everything in float32 and returns S, P and O in float32 for half-precision inputs.
# 错误：全程用 float32 计算，半精度输入时也返回 float32 的 S、P、O。
@@ -6 +6,2 @@
     '''
+    Q, K, V = Q.float(), K.float(), V.float()
