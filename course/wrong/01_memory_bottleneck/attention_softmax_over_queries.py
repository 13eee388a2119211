# selftest-replaces: standard_attention
# selftest-must-fail: test_standard_attention
# Mistake: normalises over the queries (dim=-2) instead of over the keys of each row.
# 错误：沿查询维（dim=-2）而不是沿每行的键做 softmax。
@@ -12 +12 @@
-    P = torch.softmax(S.to(torch.promote_types(S.dtype, torch.float32)), dim=-1).to(Q.dtype)
+    P = torch.softmax(S.to(torch.promote_types(S.dtype, torch.float32)), dim=-2).to(Q.dtype)
