# selftest-replaces: sl_autocast
# selftest-must-fail: test_autocast
# selftest-selfcheck-fails: test_autocast
# Mistake: hooks only the model's direct children (named_children), so nested leaves are missing and containers appear. / 错误：只挂在直接子模块上，嵌套的叶子缺失，容器却出现了。
@@ -1,5 +1,5 @@
 def autocast_dtypes(model, x, target, dtype):
     table = {}
-    leaves = [(name, m) for name, m in model.named_modules() if name and not any(m.children())]
+    leaves = [(name, m) for name, m in model.named_children()]
     hooks = [m.register_forward_hook(lambda _m, _i, out, name=name: table.__setitem__(name, out.dtype)) for name, m in leaves]
     try:
