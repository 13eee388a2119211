# selftest-replaces: sl_autocast
# selftest-must-fail: test_autocast
# selftest-selfcheck-fails: test_autocast
# Mistake: hooks only the model's direct children (named_children), so nested leaves are missing and containers appear. / 错误：只挂在直接子模块上，嵌套的叶子缺失，容器却出现了。
@@ -3 +3 @@
-    leaves = [(name, m) for name, m in model.named_modules() if name and not any(m.children())]
+    leaves = [(name, m) for name, m in model.named_children()]
