# selftest-replaces: sl_autocast
# selftest-must-fail: test_autocast
# selftest-selfcheck-fails: test_autocast
# Mistake: drops the hook handles instead of removing the hooks, so every leaf keeps its forward hook. / 错误：只丢掉钩子的句柄而没有 remove()，每个叶子模块都留着前向钩子。
@@ -15,2 +15 @@
-        for hook in hooks:
-            hook.remove()
+        hooks.clear()
