# selftest-replaces: standard_attention
# selftest-must-fail: test_standard_attention
# Mistake: computes everything in float32 and returns S, P and O in float32 for half-precision inputs.
# 错误：全程用 float32 计算，半精度输入时也返回 float32 的 S、P、O。
@@ -5,4 +5,5 @@
     with is_causal, S is -inf where key j > query i (top-left aligned). O = P V has Q's shape and dtype.
     '''
+    Q, K, V = Q.float(), K.float(), V.float()
     S = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
     if is_causal:
