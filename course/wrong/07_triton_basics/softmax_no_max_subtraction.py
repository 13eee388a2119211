# selftest-replaces: softmax_rows
# selftest-must-fail: test_softmax_rows
# selftest-selfcheck-fails: test_softmax_rows
# Mistake: exponentiates the raw scores (no max subtraction): exp overflows. / 错误：未减去最大值，exp 溢出。
@@ -13 +13 @@
-        total = total * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
+        total = total + tl.sum(tl.exp(x), axis=0)
@@ -18 +18 @@
-        y = tl.exp(x - m) / total
+        y = tl.exp(x) / total
