# selftest-replaces: standard_attention
# selftest-must-fail: test_standard_attention
# Mistake: forgets the softmax scale 1/√d.
# 错误：忘记 softmax 缩放因子 1/√d。
@@ -5,5 +5,5 @@
     with is_causal, S is -inf where key j > query i (top-left aligned). O = P V has Q's shape and dtype.
     '''
-    S = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
+    S = Q @ K.transpose(-2, -1)
     if is_causal:
         n_q, n_k = S.shape[-2:]
