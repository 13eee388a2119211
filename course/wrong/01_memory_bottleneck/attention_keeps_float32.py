# selftest-notebook: memory_bottleneck.ipynb
# selftest-replaces: standard_attention
# selftest-must-fail: test_standard_attention
# Mistake: computes everything in float32 and returns S, P and O in float32 for half-precision inputs.
# 错误：全程用 float32 计算，半精度输入时也返回 float32 的 S、P、O。
@@ -1,8 +1,4 @@
 def standard_attention(Q, K, V, is_causal=False):
-    '''O, S, P of standard attention for (..., Nq, d) queries and (..., Nk, d) keys and values.
-
-    S = Q Kᵀ/√d and P = softmax(S) (computed in float32) have shape (..., Nq, Nk) and the input dtype;
-    with is_causal, S is -inf where key j > query i (top-left aligned). O = P V has Q's shape and dtype.
-    '''
+    Q, K, V = Q.float(), K.float(), V.float()
     S = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
     if is_causal:
@@ -10,5 +6,4 @@
         later = torch.arange(n_k, device=S.device)[None, :] > torch.arange(n_q, device=S.device)[:, None]
         S = S.masked_fill(later, float("-inf"))
-    P = torch.softmax(S.to(torch.promote_types(S.dtype, torch.float32)), dim=-1).to(Q.dtype)
-    O = P @ V
-    return O, S, P
+    P = torch.softmax(S, dim=-1)
+    return P @ V, S, P
