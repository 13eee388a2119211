# selftest-replaces: sl_autocast
# selftest-must-fail: test_autocast
# selftest-selfcheck-fails: test_autocast
# Mistake: computes the loss after leaving autocast (cross-entropy then runs in the logits' 16-bit dtype). / 错误：离开 autocast 之后才计算损失（交叉熵于是在 logits 的 16 位 dtype 里运行）。
@@ -9 +9 @@
-            loss = F.cross_entropy(logits.flatten(0, -2), target.flatten())
+        loss = F.cross_entropy(logits.flatten(0, -2), target.flatten())
