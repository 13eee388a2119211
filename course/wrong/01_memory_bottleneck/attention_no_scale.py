# selftest-replaces: standard_attention
# selftest-must-fail: test_standard_attention
# Mistake: forgets the softmax scale 1/√d.
# 错误：忘记 softmax 缩放因子 1/√d。
@@ -7 +7 @@
-    S = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
+    S = Q @ K.transpose(-2, -1)
