# selftest-replaces: softmax_rows
# selftest-must-fail: test_softmax_rows
# selftest-selfcheck-fails: test_softmax_rows
# Mistake: online softmax without rescaling the running sum when the maximum grows. / 错误：最大值变大时没有重新缩放运行和。
@@ -13 +13 @@
-        total = total * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
+        total = total + tl.sum(tl.exp(x - m_new), axis=0)
