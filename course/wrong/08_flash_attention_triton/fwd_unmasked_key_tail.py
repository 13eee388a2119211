# selftest-replaces: fa_forward_kernel
# selftest-must-fail: test_forward, test_dq
# Mistake: does not mask keys past Nk: the zero-padded tail of the last key tile counts as real keys.
# 错误：未屏蔽超出 Nk 的键，最后一个键分块补零的尾部被当成真实的键。
@@ -34 +34 @@
-        visible = col_ok[None, :]
+        visible = cols[None, :] >= 0
