# selftest-notebook: memory_bottleneck.ipynb
# selftest-replaces: standard_attention
# selftest-must-fail: test_standard_attention
# Mistake: forgets the softmax scale 1/√d.
# 错误：忘记 softmax 缩放因子 1/√d。
@@ -1,9 +1,4 @@
 def standard_attention(Q, K, V, is_causal=False):
-    '''O, S, P of standard attention for (..., Nq, d) queries and (..., Nk, d) keys and values.
-
-    S = Q Kᵀ/√d and P = softmax(S) (computed in float32) have shape (..., Nq, Nk) and the input dtype;
-    with is_causal, S is -inf where key j > query i (top-left aligned). O = P V has Q's shape and dtype.
-    '''
-    S = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
+    S = Q @ K.transpose(-2, -1)
     if is_causal:
         n_q, n_k = S.shape[-2:]
@@ -11,4 +6,3 @@
         S = S.masked_fill(later, float("-inf"))
     P = torch.softmax(S.to(torch.promote_types(S.dtype, torch.float32)), dim=-1).to(Q.dtype)
-    O = P @ V
-    return O, S, P
+    return P @ V, S, P
